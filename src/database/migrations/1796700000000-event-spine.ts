import { MigrationInterface, QueryRunner } from 'typeorm';

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
    await q.query(`
      CREATE FUNCTION license_for_seat_change(p_key varchar) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        lid int;
        timeout int;
      BEGIN
        SELECT l.id, ((p.default_policy || l.policy) ->> 'heartbeat_timeout_seconds')::int INTO lid, timeout
          FROM licenses l JOIN products p ON p.id = l.product_id WHERE l.license_key = p_key FOR UPDATE OF l;
        IF lid IS NULL THEN RETURN NULL; END IF;
        IF timeout IS NOT NULL THEN
          PERFORM 1 FROM activations WHERE license_id = lid AND released_at IS NULL FOR UPDATE;
        END IF;
        RETURN (
          SELECT json_build_object(
            'license', to_jsonb(l) - 'search_text', 'product', to_json(p), 'now', now(),
            'next_seat_id', nextval(pg_get_serial_sequence('activations', 'id')),
            'seats', coalesce((SELECT json_agg(s ORDER BY s.activated_at DESC, s.id DESC) FROM activations s
                               WHERE s.license_id = lid AND s.released_at IS NULL), '[]'::json),
            'recent_deactivations', coalesce((SELECT json_agg(a.released_at ORDER BY a.released_at) FROM activations a
                               WHERE a.license_id = lid AND a.release_reason = 'deactivated'
                                 AND a.released_at > now() - interval '30 days'), '[]'::json))
          FROM licenses l JOIN products p ON p.id = l.product_id WHERE l.id = lid);
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION license_for_seat_change(varchar)`);
    await q.query(`DELETE FROM webhook_events WHERE fanned_out_at IS NULL`);
    await q.query(`DROP INDEX webhook_events_pending_fanout_idx`);
    await q.query(`ALTER TABLE webhook_events DROP COLUMN license_id, DROP COLUMN product_id, DROP COLUMN fanned_out_at`);
  }
}
