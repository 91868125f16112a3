import { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhooks (docs/webhooks.md): endpoints, the event outbox, deliveries, and the once-only record of time-driven events. */
export class Webhooks1796400000000 implements MigrationInterface {
  name = 'Webhooks1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id serial PRIMARY KEY,
        url varchar(2048) NOT NULL,
        description varchar(500),
        events text[] NOT NULL,
        secret varchar(100) NOT NULL,
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_endpoints_events_check CHECK (cardinality(events) > 0)
      )`);
    await q.query(`
      CREATE TABLE webhook_events (
        id varchar(40) PRIMARY KEY,
        type varchar(64) NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id bigserial PRIMARY KEY,
        endpoint_id int NOT NULL,
        event_id varchar(40) NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending',
        attempts int NOT NULL DEFAULT 0,
        last_status_code int,
        last_error varchar(500),
        next_attempt_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz,
        CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'delivered', 'failed')),
        CONSTRAINT webhook_deliveries_endpoint_event_key UNIQUE (endpoint_id, event_id)
      )`);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT "FK_webhook_deliveries_endpoint" FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE`,
    );
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT "FK_webhook_deliveries_event" FOREIGN KEY (event_id) REFERENCES webhook_events(id) ON DELETE CASCADE`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id)`);
    await q.query(`CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (created_at) WHERE status = 'pending'`);
    await q.query(`
      CREATE TABLE webhook_expiry_notices (
        license_id int NOT NULL,
        kind varchar(16) NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_expiry_notices_kind_check CHECK (kind IN ('expiring_soon', 'expired')),
        PRIMARY KEY (license_id, kind, expires_at)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_expiry_notices`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_events`);
    await q.query(`DROP TABLE webhook_endpoints`);
  }
}
