import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Store events that need a seller's attention (docs/stores.md, Needs attention): failed ones, and ignored ones for a
 * price without a plan until staff replay them. `replayed_at` records the last replay; the partial index keeps the
 * dashboard's count and the filtered list cheap however long the ledger grows.
 */
export class StoreEventAttention1797110000000 implements MigrationInterface {
  name = 'StoreEventAttention1797110000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE store_events ADD COLUMN replayed_at timestamptz`);
    await q.query(`CREATE INDEX store_events_attention_idx ON store_events (id)
      WHERE status = 'failed' OR (status = 'ignored' AND reason_code = 'NO_PLAN' AND replayed_at IS NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX store_events_attention_idx`);
    await q.query(`ALTER TABLE store_events DROP COLUMN replayed_at`);
  }
}
