import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * webhook_events becomes the events outbox of every state change (docs/webhooks.md, The event spine): written with the
 * change by the event recorder, fanned out to endpoints after commit. Events written before were fanned out already.
 */
export class EventSpine1796700000000 implements MigrationInterface {
  name = 'EventSpine1796700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events ADD COLUMN license_id int, ADD COLUMN product_id int, ADD COLUMN fanned_out_at timestamptz`);
    await q.query(`UPDATE webhook_events SET fanned_out_at = created_at`);
    await q.query(`CREATE INDEX webhook_events_pending_fanout_idx ON webhook_events (created_at) WHERE fanned_out_at IS NULL`);
    // One round trip for a seat change's load: the lock first, then reads that see every change committed before the
    // lock was granted (a plpgsql statement takes a new snapshot; one plain SELECT ... FOR UPDATE would read its seats
    // from the snapshot taken before it waited). Live seats of a licence with a heartbeat timeout are locked too, so
    // the sweep cannot release the dead ones this change releases. next_seat_id: the id a new seat will get.
    await q.query(sqlFunction('license_for_seat_change.v1'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION license_for_seat_change(varchar)`);
    await q.query(`DELETE FROM webhook_events WHERE fanned_out_at IS NULL`);
    await q.query(`DROP INDEX webhook_events_pending_fanout_idx`);
    await q.query(`ALTER TABLE webhook_events DROP COLUMN license_id, DROP COLUMN product_id, DROP COLUMN fanned_out_at`);
  }
}
