import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Admin tokens with scopes (docs/admin-api.md, Credentials). Only the SHA-256 of a token is stored, unique, so the guard finds a
 * token by one index lookup per request; a revoke is a row update every instance sees on its next request.
 */
export class AdminTokens1796200000000 implements MigrationInterface {
  name = 'AdminTokens1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin_tokens (
        id serial NOT NULL,
        name varchar(100) NOT NULL,
        token_hash char(64) NOT NULL,
        scopes text[] NOT NULL,
        products text[],
        expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz,
        CONSTRAINT admin_tokens_pkey PRIMARY KEY (id),
        CONSTRAINT admin_tokens_token_hash_key UNIQUE (token_hash),
        CONSTRAINT admin_tokens_name_key UNIQUE (name),
        CONSTRAINT admin_tokens_scopes_not_empty CHECK (cardinality(scopes) > 0)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin_tokens`);
  }
}
