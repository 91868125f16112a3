import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk changes of many licences (docs/dashboard.md, Bulk actions): the operation (what, by whom) and one row per licence
 * it covers, marked done or skipped in the transaction that changes that licence, so a retried or doubled worker never
 * changes a licence twice.
 */
export class BulkOperations1797080000000 implements MigrationInterface {
  name = 'BulkOperations1797080000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE license_bulk_operations (
      id bigserial CONSTRAINT license_bulk_operations_pkey PRIMARY KEY,
      action varchar(16) NOT NULL,
      days int,
      reason varchar(500),
      product_scope int[],
      total int NOT NULL,
      actor_type varchar(16) NOT NULL,
      actor varchar(320),
      actor_ip varchar(45),
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    )`);
    await q.query(`CREATE TABLE license_bulk_items (
      operation_id bigint NOT NULL CONSTRAINT license_bulk_items_operation_fkey REFERENCES license_bulk_operations (id) ON DELETE CASCADE,
      license_id int NOT NULL,
      outcome varchar(16),
      message varchar(500),
      CONSTRAINT license_bulk_items_pkey PRIMARY KEY (operation_id, license_id)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE license_bulk_items`);
    await q.query(`DROP TABLE license_bulk_operations`);
  }
}
