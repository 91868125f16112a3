import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Self-service trials (docs/licences.md, Trials): a product's `trial` settings (null: no trials), shown to the licences
 * module through product_catalog, and one trial per product and machine, ever (the primary key of `trials`).
 */
export class Trials1796910000000 implements MigrationInterface {
  name = 'Trials1796910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE products ADD COLUMN trial jsonb`);
    await q.query(`ALTER TABLE products ADD CONSTRAINT products_trial_check CHECK (trial IS NULL OR jsonb_typeof(trial) = 'object')`);
    // Appending a column keeps the view's existing ones, so CREATE OR REPLACE suffices.
    await q.query(`
      CREATE OR REPLACE VIEW product_catalog AS
        SELECT id, code, name, key_prefix, default_limits, default_policy, available_features, active, created_at, updated_at, trial
        FROM products`);
    await q.query(`
      CREATE TABLE trials (
        product_id int NOT NULL,
        machine_fingerprint varchar(71) NOT NULL,
        license_id int NOT NULL,
        customer_email varchar(254),
        ip varchar(45),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT trials_pkey PRIMARY KEY (product_id, machine_fingerprint),
        CONSTRAINT trials_license_fkey FOREIGN KEY (license_id) REFERENCES licenses (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX trials_email_idx ON trials (product_id, customer_email, created_at) WHERE customer_email IS NOT NULL`);
    await q.query(`CREATE INDEX trials_created_idx ON trials (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS trials`);
    await q.query(`
      CREATE OR REPLACE VIEW product_catalog AS
        SELECT id, code, name, key_prefix, default_limits, default_policy, available_features, active, created_at, updated_at
        FROM products`);
    await q.query(`ALTER TABLE products DROP COLUMN trial`);
  }
}
