import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why a store event ended as it did, as a code a seller can filter on (docs/stores.md, Reason codes), and the kind of
 * payment a payment id names (docs/stores.md, Refunds): an order, a subscription invoice and a transaction of one store
 * may share an id, so a refund matches only a payment of its own kind. Existing rows get the code and kind their
 * message and type imply.
 */
export class StoreEventReasons1797100000000 implements MigrationInterface {
  name = 'StoreEventReasons1797100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE store_events
      ADD COLUMN reason_code text CONSTRAINT store_events_reason_code_check CHECK (reason_code IN (
        'NO_PLAN', 'UNHANDLED_TYPE', 'NOT_PAID', 'TEST_MODE', 'OUT_OF_ORDER', 'AWAITING_CUSTOMER', 'UNKNOWN_SUBSCRIPTION',
        'API_VERSION_MISMATCH', 'STORE_API_KEY_MISSING', 'STORE_API_ERROR', 'INVALID_QUANTITY', 'INVALID_PAYLOAD', 'OTHER_PRODUCT')),
      ADD COLUMN payment_kind varchar(16) CONSTRAINT store_events_payment_kind_check CHECK (payment_kind IN ('order', 'invoice', 'transaction'))`);
    await q.query(`UPDATE store_events SET payment_kind = CASE
        WHEN store = 'paddle' THEN 'transaction'
        WHEN store = 'lemonsqueezy' AND payload->'data'->>'type' = 'subscription-invoices' THEN 'invoice'
        WHEN store = 'lemonsqueezy' THEN 'order'
        WHEN type = 'checkout.session.completed' THEN 'order'
        WHEN type = 'invoice.paid' THEN 'invoice'
      END
      WHERE payment_id IS NOT NULL`);
    await q.query(`UPDATE store_events SET reason_code = CASE
        WHEN status = 'failed' AND error LIKE 'api\\_version%' THEN 'API_VERSION_MISMATCH'
        WHEN status = 'failed' AND error LIKE '%API\\_KEY is unset%' THEN 'STORE_API_KEY_MISSING'
        WHEN status = 'failed' AND error LIKE '%through the store''s API%' THEN 'STORE_API_ERROR'
        WHEN status = 'failed' AND error LIKE '%is for product%' THEN 'OTHER_PRODUCT'
        WHEN status = 'failed' THEN 'INVALID_PAYLOAD'
        WHEN status = 'ignored' AND error LIKE 'no plan for%' THEN 'NO_PLAN'
        WHEN status = 'ignored' AND error LIKE 'a test-mode event%' THEN 'TEST_MODE'
        WHEN status = 'ignored' AND error LIKE 'older than%' THEN 'OUT_OF_ORDER'
        WHEN status = 'ignored' AND error LIKE 'an order % changes nothing' THEN 'NOT_PAID'
        WHEN status = 'ignored' THEN 'UNHANDLED_TYPE'
        WHEN status = 'pending' AND error LIKE 'waiting for the buyer%' THEN 'AWAITING_CUSTOMER'
        WHEN status = 'pending' THEN 'UNKNOWN_SUBSCRIPTION'
      END`);
    await q.query(`DROP INDEX store_events_payment_idx`);
    await q.query(`CREATE INDEX store_events_payment_idx ON store_events (store, payment_kind, payment_id) WHERE payment_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX store_events_payment_idx`);
    await q.query(`CREATE INDEX store_events_payment_idx ON store_events (store, payment_id) WHERE payment_id IS NOT NULL`);
    await q.query(`ALTER TABLE store_events DROP COLUMN payment_kind, DROP COLUMN reason_code`);
  }
}
