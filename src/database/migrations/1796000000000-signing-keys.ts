import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The keyring (docs/signing.md, The keyring): every signing key with its state, shared by all instances. The partial unique index
 * keeps exactly one key active even when several instances start or rotate at once. The key itself is created
 * at start-up (KeyringService), not here: it needs KEYRING_SECRET and SIGNING_KEY_FILE.
 */
export class SigningKeys1796000000000 implements MigrationInterface {
  name = 'SigningKeys1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE signing_keys (
        key_id varchar(16) NOT NULL,
        status varchar(16) NOT NULL,
        public_key_pem text NOT NULL,
        private_key_encrypted text,
        origin varchar(16) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        retired_at timestamptz,
        revoked_at timestamptz,
        CONSTRAINT signing_keys_pkey PRIMARY KEY (key_id),
        CONSTRAINT signing_keys_key_id_check CHECK (key_id ~ '^[0-9a-f]{16}$'),
        CONSTRAINT signing_keys_status_check CHECK (status IN ('active', 'retired', 'revoked')),
        CONSTRAINT signing_keys_origin_check CHECK (origin IN ('imported', 'generated')),
        CONSTRAINT signing_keys_lifecycle_check CHECK (
          (status = 'active' AND private_key_encrypted IS NOT NULL AND retired_at IS NULL AND revoked_at IS NULL)
          OR (status = 'retired' AND private_key_encrypted IS NULL AND retired_at IS NOT NULL AND revoked_at IS NULL)
          OR (status = 'revoked' AND private_key_encrypted IS NULL AND retired_at IS NOT NULL AND revoked_at IS NOT NULL)
        )
      )`);
    await q.query(`CREATE UNIQUE INDEX signing_keys_one_active_idx ON signing_keys (status) WHERE status = 'active'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE signing_keys`);
  }
}
