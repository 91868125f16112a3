import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Seat policies (docs/licences.md, Seat policies): products' default_policy and licences' policy overrides (jsonb objects; the
 * bounds are checked by the API), a third release reason `heartbeat_timeout`, and the indexes that count
 * a licence's recent deactivations and a product's recent heartbeat releases from a few index entries.
 */
export class SeatPolicies1796100000000 implements MigrationInterface {
  name = 'SeatPolicies1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE products ADD COLUMN default_policy jsonb NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE products ADD CONSTRAINT products_default_policy_check CHECK (jsonb_typeof(default_policy) = 'object')`);
    await q.query(`ALTER TABLE licenses ADD COLUMN policy jsonb NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE licenses ADD CONSTRAINT licenses_policy_check CHECK (jsonb_typeof(policy) = 'object')`);
    // The reason's CHECK was created unnamed (or renamed since): find it by what it says, not by a guessed name.
    await q.query(`
      DO $$
      DECLARE c text;
      BEGIN
        FOR c IN SELECT conname FROM pg_constraint
                 WHERE conrelid = 'activations'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%release_reason%'
                   AND pg_get_constraintdef(oid) LIKE '%force_released%'
        LOOP
          EXECUTE format('ALTER TABLE activations DROP CONSTRAINT %I', c);
        END LOOP;
      END $$`);
    await q.query(
      `ALTER TABLE activations ADD CONSTRAINT activations_release_reason_check CHECK (release_reason IN ('deactivated', 'force_released', 'heartbeat_timeout'))`,
    );
    await q.query(`CREATE INDEX activations_deactivated_idx ON activations (license_id, released_at) WHERE release_reason = 'deactivated'`);
    await q.query(
      `CREATE INDEX activations_heartbeat_released_idx ON activations (released_at) WHERE release_reason = 'heartbeat_timeout'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS activations_deactivated_idx, activations_heartbeat_released_idx`);
    await q.query(`UPDATE activations SET release_reason = 'force_released' WHERE release_reason = 'heartbeat_timeout'`);
    await q.query(`ALTER TABLE activations DROP CONSTRAINT activations_release_reason_check`);
    await q.query(
      `ALTER TABLE activations ADD CONSTRAINT activations_release_reason_check CHECK (release_reason IN ('deactivated', 'force_released'))`,
    );
    await q.query(`ALTER TABLE licenses DROP COLUMN policy`);
    await q.query(`ALTER TABLE products DROP COLUMN default_policy`);
  }
}
