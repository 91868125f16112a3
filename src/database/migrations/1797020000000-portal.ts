import { MigrationInterface, QueryRunner } from 'typeorm';

/** The customer portal (docs/portal.md): sign-in links, stored only as hashes, and the portal's own session table. */
export class Portal1797020000000 implements MigrationInterface {
  name = 'Portal1797020000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE portal_sign_in_tokens (
        id bigserial CONSTRAINT portal_sign_in_tokens_pkey PRIMARY KEY,
        token_hash varchar(64) NOT NULL CONSTRAINT portal_sign_in_tokens_token_hash_key UNIQUE,
        email varchar(254) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    await q.query(`CREATE INDEX portal_sign_in_tokens_expires_idx ON portal_sign_in_tokens (expires_at)`);
    // connect-pg-simple's table for portal sessions: apart from staff sessions, so neither store can hold the other's.
    await q.query(`
      CREATE TABLE portal_session (
        sid varchar NOT NULL PRIMARY KEY,
        sess json NOT NULL,
        expire timestamp(6) NOT NULL
      )`);
    await q.query(`CREATE INDEX portal_session_expire_idx ON portal_session (expire)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE portal_session`);
    await q.query(`DROP TABLE portal_sign_in_tokens`);
  }
}
