import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a store subscription of a licence ended (docs/stores.md, What each event does): until then the subscription is
 * active and renews, so no expiry reminder is mailed (docs/mail.md, Stores).
 */
export class StoreSubscriptionEnd1797040000000 implements MigrationInterface {
  name = 'StoreSubscriptionEnd1797040000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE licenses ADD COLUMN store_subscription_ended_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE licenses DROP COLUMN store_subscription_ended_at`);
  }
}
