import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage metering (docs/licences.md, Usage metering): one counter per licence and period, counted by one atomic
 * upsert, and the idempotency keys of POST /api/v1/usage with the first answer they got (kept 24 hours).
 */
export class UsageMetering1796900000000 implements MigrationInterface {
  name = 'UsageMetering1796900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE usage_counters (
        license_id int NOT NULL,
        period_start timestamptz NOT NULL,
        uses bigint NOT NULL DEFAULT 0,
        CONSTRAINT usage_counters_pkey PRIMARY KEY (license_id, period_start),
        CONSTRAINT usage_counters_uses_check CHECK (uses >= 0),
        CONSTRAINT usage_counters_license_fkey FOREIGN KEY (license_id) REFERENCES licenses (id) ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE usage_idempotency_keys (
        license_id int NOT NULL,
        idempotency_key varchar(128) NOT NULL,
        request_hash varchar(64) NOT NULL,
        answer jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT usage_idempotency_keys_pkey PRIMARY KEY (license_id, idempotency_key),
        CONSTRAINT usage_idempotency_keys_license_fkey FOREIGN KEY (license_id) REFERENCES licenses (id) ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS usage_idempotency_keys, usage_counters`);
  }
}
