import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Paddle and Lemon Squeezy on the store framework (docs/stores.md): each ledger row names its store customer (a
 * Paddle purchase waits for the buyer's e-mail, which a customer event brings) and the price and quantity it applied
 * (stores that send no previous values tell a plan change from any other subscription update by comparing them); a
 * licence is found by its store order (Lemon Squeezy sends an order and its subscription as two events).
 */
export class StoreEventBuyers1797010000000 implements MigrationInterface {
  name = 'StoreEventBuyers1797010000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE store_events
      ADD COLUMN customer_id varchar(255),
      ADD COLUMN price_id varchar(255),
      ADD COLUMN quantity int`);
    await q.query(`CREATE INDEX store_events_customer_idx ON store_events (store, customer_id) WHERE customer_id IS NOT NULL`);
    await q.query(`CREATE INDEX licenses_store_order_idx ON licenses (store_name, store_order_id) WHERE store_order_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX licenses_store_order_idx`);
    await q.query(`DROP INDEX store_events_customer_idx`);
    await q.query(`ALTER TABLE store_events DROP COLUMN customer_id, DROP COLUMN price_id, DROP COLUMN quantity`);
  }
}
