import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event spine gets names of its own (docs/webhooks.md, The event spine): the outbox of every state change is
 * event_outbox (webhooks are one of its consumers), and the expiry scan's notices belong to the licences
 * (license_expiry_notices). The scan's job moved with it: the old schedule is dropped, the licences schedule their own.
 */
export class EventOutbox1797120000000 implements MigrationInterface {
  name = 'EventOutbox1797120000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events RENAME TO event_outbox`);
    await q.query(`ALTER TABLE event_outbox RENAME CONSTRAINT webhook_events_pkey TO event_outbox_pkey`);
    await q.query(`ALTER INDEX webhook_events_pending_fanout_idx RENAME TO event_outbox_pending_idx`);
    await q.query(`ALTER TABLE webhook_expiry_notices RENAME TO license_expiry_notices`);
    await q.query(`ALTER TABLE license_expiry_notices RENAME CONSTRAINT webhook_expiry_notices_pkey TO license_expiry_notices_pkey`);
    await q.query(
      `ALTER TABLE license_expiry_notices RENAME CONSTRAINT webhook_expiry_notices_kind_check TO license_expiry_notices_kind_check`,
    );
    await dropSchedule(q, 'webhook-expiry-scan');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE license_expiry_notices RENAME CONSTRAINT license_expiry_notices_kind_check TO webhook_expiry_notices_kind_check`,
    );
    await q.query(`ALTER TABLE license_expiry_notices RENAME CONSTRAINT license_expiry_notices_pkey TO webhook_expiry_notices_pkey`);
    await q.query(`ALTER TABLE license_expiry_notices RENAME TO webhook_expiry_notices`);
    await q.query(`ALTER INDEX event_outbox_pending_idx RENAME TO webhook_events_pending_fanout_idx`);
    await q.query(`ALTER TABLE event_outbox RENAME CONSTRAINT event_outbox_pkey TO webhook_events_pkey`);
    await q.query(`ALTER TABLE event_outbox RENAME TO webhook_events`);
    await dropSchedule(q, 'licenses.expiry-scan');
  }
}

/** The job engine's schema exists only once it has started: a fresh database has no schedule to drop. */
async function dropSchedule(q: QueryRunner, name: string): Promise<void> {
  await q.query(`DO $$ BEGIN
    IF to_regclass('pgboss.schedule') IS NOT NULL THEN DELETE FROM pgboss.schedule WHERE name = '${name}'; END IF;
  END $$`);
}
