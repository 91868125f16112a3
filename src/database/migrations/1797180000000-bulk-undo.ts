import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Undo of a bulk operation (docs/dashboard.md, Bulk actions): each changed licence's item keeps what it was before and
 * what the operation left, and an undo operation names the operation it undoes; at most one undo per operation.
 */
export class BulkUndo1797180000000 implements MigrationInterface {
  name = 'BulkUndo1797180000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE license_bulk_items
      ADD COLUMN previous_expires_at timestamptz,
      ADD COLUMN previous_active boolean,
      ADD COLUMN new_expires_at timestamptz`);
    await q.query(`ALTER TABLE license_bulk_operations
      ADD COLUMN undo_of bigint CONSTRAINT license_bulk_operations_undo_of_fkey REFERENCES license_bulk_operations (id) ON DELETE CASCADE,
      ADD CONSTRAINT license_bulk_operations_undo_of_key UNIQUE (undo_of)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE license_bulk_operations DROP COLUMN undo_of`);
    await q.query(
      `ALTER TABLE license_bulk_items DROP COLUMN previous_expires_at, DROP COLUMN previous_active, DROP COLUMN new_expires_at`,
    );
  }
}
