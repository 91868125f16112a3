import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ed25519 keys and endorsements (docs/signing.md, Endorsed rotation): each key names its algorithm (every existing key is
 * RSA-SHA256) and carries the endorsements other keys made of it, `[{key_id, signature}]`, in the order they were added.
 */
export class SigningKeyEndorsements1797030000000 implements MigrationInterface {
  name = 'SigningKeyEndorsements1797030000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE signing_keys
        ADD COLUMN algorithm varchar(16) NOT NULL DEFAULT 'RSA-SHA256',
        ADD COLUMN endorsements jsonb NOT NULL DEFAULT '[]',
        ADD CONSTRAINT signing_keys_algorithm_check CHECK (algorithm IN ('RSA-SHA256', 'Ed25519')),
        ADD CONSTRAINT signing_keys_endorsements_check CHECK (jsonb_typeof(endorsements) = 'array')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE signing_keys
        DROP CONSTRAINT signing_keys_endorsements_check,
        DROP CONSTRAINT signing_keys_algorithm_check,
        DROP COLUMN endorsements,
        DROP COLUMN algorithm`);
  }
}
