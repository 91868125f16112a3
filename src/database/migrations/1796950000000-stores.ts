import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Licences from purchases (docs/stores.md): the plans that map a store's price to a product, the ledger of store events,
 * the store fields of a store-made licence, and the audit log's new actors (a store, a customer named by e-mail).
 */
export class Stores1796950000000 implements MigrationInterface {
  name = 'Stores1796950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE store_plans (
        id serial CONSTRAINT store_plans_pkey PRIMARY KEY,
        store varchar(16) NOT NULL CONSTRAINT store_plans_store_check CHECK (store IN ('stripe', 'paddle', 'lemonsqueezy')),
        price_id varchar(255) NOT NULL,
        product_id int NOT NULL CONSTRAINT store_plans_product_id_fkey REFERENCES products(id) ON DELETE RESTRICT,
        license_type varchar(16) NOT NULL
          CONSTRAINT store_plans_license_type_check CHECK (license_type IN ('TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY', 'PERPETUAL')),
        limits jsonb NOT NULL DEFAULT '{}' CONSTRAINT store_plans_limits_check CHECK (jsonb_typeof(limits) = 'object'),
        features jsonb,
        policy jsonb NOT NULL DEFAULT '{}' CONSTRAINT store_plans_policy_check CHECK (jsonb_typeof(policy) = 'object'),
        grace_days int NOT NULL DEFAULT 7 CONSTRAINT store_plans_grace_days_check CHECK (grace_days BETWEEN 0 AND 365),
        on_end varchar(8) NOT NULL CONSTRAINT store_plans_on_end_check CHECK (on_end IN ('expire', 'suspend', 'revoke')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX store_plans_store_price_key ON store_plans (store, price_id)`);
    await q.query(`CREATE INDEX store_plans_product_idx ON store_plans (product_id)`);

    await q.query(`ALTER TABLE licenses
      ADD COLUMN store_name varchar(16) CONSTRAINT licenses_store_name_check CHECK (store_name IN ('stripe', 'paddle', 'lemonsqueezy')),
      ADD COLUMN store_customer_id varchar(255),
      ADD COLUMN store_subscription_id varchar(255),
      ADD COLUMN store_order_id varchar(255)`);
    // One licence per store subscription: two deliveries of a purchase cannot make two.
    await q.query(`CREATE UNIQUE INDEX licenses_store_subscription_key ON licenses (store_name, store_subscription_id)
      WHERE store_subscription_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE store_events (
        id bigserial CONSTRAINT store_events_pkey PRIMARY KEY,
        store varchar(16) NOT NULL CONSTRAINT store_events_store_check CHECK (store IN ('stripe', 'paddle', 'lemonsqueezy')),
        event_id varchar(255) NOT NULL,
        type varchar(100) NOT NULL,
        status varchar(10) NOT NULL CONSTRAINT store_events_status_check CHECK (status IN ('processed', 'ignored', 'pending', 'failed')),
        received_at timestamptz NOT NULL DEFAULT now(),
        occurred_at timestamptz,
        subscription_id varchar(255),
        action varchar(16),
        payment_id varchar(255),
        period_start timestamptz,
        license_id int CONSTRAINT store_events_license_id_fkey REFERENCES licenses(id) ON DELETE SET NULL,
        error text,
        payload jsonb NOT NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX store_events_store_event_key ON store_events (store, event_id)`);
    await q.query(`CREATE INDEX store_events_subscription_idx ON store_events (store, subscription_id, occurred_at)
      WHERE subscription_id IS NOT NULL`);
    await q.query(`CREATE INDEX store_events_payment_idx ON store_events (store, payment_id) WHERE payment_id IS NOT NULL`);
    await q.query(`CREATE INDEX store_events_status_idx ON store_events (status, id)`);
    await q.query(`CREATE INDEX store_events_license_idx ON store_events (license_id, id) WHERE license_id IS NOT NULL`);

    await q.query(`ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_actor_type_check`);
    await q.query(`ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_actor_type_check
      CHECK (actor_type IN ('admin_api', 'dashboard', 'client', 'system', 'store', 'customer'))`);
    // "customer:" and an e-mail address of up to 254 characters.
    await q.query(`ALTER TABLE audit_entries ALTER COLUMN actor TYPE varchar(320)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_entries ALTER COLUMN actor TYPE varchar(200) USING left(actor, 200)`);
    await q.query(`ALTER TABLE audit_entries DROP CONSTRAINT audit_entries_actor_type_check`);
    await q.query(`ALTER TABLE audit_entries ADD CONSTRAINT audit_entries_actor_type_check
      CHECK (actor_type IN ('admin_api', 'dashboard', 'client', 'system'))`);
    await q.query(`DROP TABLE store_events`);
    await q.query(`DROP INDEX licenses_store_subscription_key`);
    await q.query(`ALTER TABLE licenses DROP COLUMN store_name, DROP COLUMN store_customer_id, DROP COLUMN store_subscription_id,
      DROP COLUMN store_order_id`);
    await q.query(`DROP TABLE store_plans`);
  }
}
