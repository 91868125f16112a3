import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { param, raw, runStatement, sql } from '../../database/statement';

export interface BulkOperationRow {
  id: string;
  action: string;
  days: number | null;
  reason: string | null;
  product_scope: number[] | null;
  total: number;
  actor_type: string;
  actor: string | null;
  actor_ip: string | null;
  created_at: Date;
  finished_at: Date | null;
  /** undo: the operation it moves back. */
  undo_of: string | null;
}

/** What a done item kept: the licence before the change and the expiry the change left. */
export interface BulkChangeRow {
  previous_expires_at: Date | null;
  previous_active: boolean | null;
  new_expires_at: Date | null;
}

export interface BulkCounts {
  done: number;
  skipped: number;
  pending: number;
}

export interface BulkSkippedRow {
  license_id: number;
  message: string | null;
}

export type NewBulkOperation = Pick<
  BulkOperationRow,
  'action' | 'days' | 'reason' | 'product_scope' | 'actor_type' | 'actor' | 'actor_ip' | 'undo_of'
>;

/**
 * Bulk operations and their items (docs/dashboard.md, Bulk actions). Style: named SQL with typed rows; it names only
 * `license_bulk_operations` and `license_bulk_items` (docs/architecture.md, Database style).
 */
@Injectable()
export class BulkOperationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The operation and one pending item per licence, in the caller's transaction; returns the operation's id. */
  async insert(operation: NewBulkOperation, licenseIds: readonly number[], manager: EntityManager): Promise<string> {
    const licenseIdsParam = param(licenseIds);
    const rows = await runStatement<{ id: string }>(
      manager,
      'bulk-operations-insert',
      sql`WITH op AS (
         INSERT INTO license_bulk_operations (action, days, reason, product_scope, total, actor_type, actor, actor_ip, undo_of)
         VALUES (${operation.action}, ${operation.days}, ${operation.reason}, ${operation.product_scope}::int[], cardinality(${licenseIdsParam}::int[]), ${operation.actor_type}, ${operation.actor}, ${operation.actor_ip}, ${operation.undo_of}) RETURNING id
       ), items AS (
         INSERT INTO license_bulk_items (operation_id, license_id) SELECT op.id, unnest(${licenseIdsParam}::int[]) FROM op
       )
       SELECT id FROM op`,
    );
    return rows[0].id;
  }

  /** The licences an operation changed (its done items), in id order, at most `limit`: what its undo covers. */
  async changedIds(id: string, limit: number | null, manager: EntityManager = this.dataSource.manager): Promise<number[]> {
    const rows = await runStatement<{ license_id: number }>(
      manager,
      'bulk-operations-changed-ids',
      sql`SELECT license_id FROM license_bulk_items WHERE operation_id = ${id} AND outcome = 'done' ORDER BY license_id LIMIT ${limit}`,
    );
    return rows.map((r) => r.license_id);
  }

  /** The operation that undoes this one, if any. */
  async undoneBy(id: string): Promise<string | null> {
    const rows = await runStatement<{ id: string }>(
      this.dataSource.manager,
      'bulk-operations-undone-by',
      sql`SELECT id FROM license_bulk_operations WHERE undo_of = ${id}`,
    );
    return rows[0]?.id ?? null;
  }

  /** What the item of this licence kept when the operation changed it (null: not changed, or changed before items kept it). */
  async change(id: string, licenseId: number, manager: EntityManager): Promise<BulkChangeRow | null> {
    const rows = await runStatement<BulkChangeRow>(
      manager,
      'bulk-operations-change',
      sql`SELECT previous_expires_at, previous_active, new_expires_at FROM license_bulk_items
        WHERE operation_id = ${id} AND license_id = ${licenseId} AND outcome = 'done' AND previous_active IS NOT NULL`,
    );
    return rows[0] ?? null;
  }

  /** The kept changes of some licences of an operation, by licence id (the undo's preview). */
  async changes(id: string, licenseIds: readonly number[]): Promise<Map<number, BulkChangeRow>> {
    const rows = await runStatement<BulkChangeRow & { license_id: number }>(
      this.dataSource.manager,
      'bulk-operations-changes',
      sql`SELECT license_id, previous_expires_at, previous_active, new_expires_at FROM license_bulk_items
        WHERE operation_id = ${id} AND license_id = ANY(${licenseIds}::int[]) AND outcome = 'done' AND previous_active IS NOT NULL`,
    );
    return new Map(rows.map(({ license_id, ...change }) => [license_id, change]));
  }

  /** Keeps, in the caller's transaction, what a claimed item's licence was before the change and the expiry it left. */
  async keep(id: string, licenseId: number, change: BulkChangeRow, manager: EntityManager): Promise<void> {
    await runStatement(
      manager,
      'bulk-operations-keep',
      sql`UPDATE license_bulk_items SET previous_expires_at = ${change.previous_expires_at}, previous_active = ${change.previous_active}, new_expires_at = ${change.new_expires_at} WHERE operation_id = ${id} AND license_id = ${licenseId}`,
    );
  }

  async get(id: string): Promise<BulkOperationRow | null> {
    const rows = await runStatement<BulkOperationRow>(
      this.dataSource.manager,
      'bulk-operations-get',
      sql`SELECT * FROM license_bulk_operations WHERE id = ${id}`,
    );
    return rows[0] ?? null;
  }

  /** The newest operations first. */
  recent(limit: number): Promise<(BulkOperationRow & BulkCounts)[]> {
    return runStatement<BulkOperationRow & BulkCounts>(
      this.dataSource.manager,
      'bulk-operations-recent',
      sql`SELECT o.*, c.done, c.skipped, c.pending FROM (SELECT * FROM license_bulk_operations ORDER BY id DESC LIMIT ${limit}) o
       CROSS JOIN LATERAL (${raw(COUNTS)} WHERE i.operation_id = o.id) c ORDER BY o.id DESC`,
    );
  }

  async counts(id: string): Promise<BulkCounts> {
    const rows = await runStatement<BulkCounts>(
      this.dataSource.manager,
      'bulk-operations-counts',
      sql`${raw(COUNTS)} WHERE i.operation_id = ${id}`,
    );
    return rows[0];
  }

  /** The skipped items with their reasons, in licence id order, at most `limit`. */
  skipped(id: string, limit: number): Promise<BulkSkippedRow[]> {
    return runStatement<BulkSkippedRow>(
      this.dataSource.manager,
      'bulk-operations-skipped',
      sql`SELECT license_id, message FROM license_bulk_items WHERE operation_id = ${id} AND outcome = 'skipped' ORDER BY license_id LIMIT ${limit}`,
    );
  }

  /** The next pending licences after `afterLicenseId`, in id order (the primary key's order: no scan of finished items). */
  async pending(id: string, afterLicenseId: number, limit: number): Promise<number[]> {
    const rows = await runStatement<{ license_id: number }>(
      this.dataSource.manager,
      'bulk-operations-pending',
      sql`SELECT license_id FROM license_bulk_items WHERE operation_id = ${id} AND license_id > ${afterLicenseId} AND outcome IS NULL ORDER BY license_id LIMIT ${limit}`,
    );
    return rows.map((r) => r.license_id);
  }

  /**
   * Marks a pending item done in the caller's transaction; false when it no longer is pending (another worker has it:
   * the row lock makes the second wait for the first's commit, then find it done).
   */
  async claim(id: string, licenseId: number, manager: EntityManager): Promise<boolean> {
    // Wrapped in a SELECT: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
    const rows = await runStatement<{ n: number }>(
      manager,
      'bulk-operations-claim',
      sql`WITH claimed AS (
         UPDATE license_bulk_items SET outcome = 'done' WHERE operation_id = ${id} AND license_id = ${licenseId} AND outcome IS NULL RETURNING 1
       ) SELECT count(*)::int AS n FROM claimed`,
    );
    return rows[0].n === 1;
  }

  /** Marks a pending item skipped, with why. */
  async skip(id: string, licenseId: number, message: string): Promise<void> {
    await runStatement(
      this.dataSource.manager,
      'bulk-operations-skip',
      sql`UPDATE license_bulk_items SET outcome = 'skipped', message = left(${message}, 500) WHERE operation_id = ${id} AND license_id = ${licenseId} AND outcome IS NULL`,
    );
  }

  /** Records the end once no item is pending (the first worker to see it finished sets the time). */
  async finishIfDone(id: string): Promise<void> {
    await runStatement(
      this.dataSource.manager,
      'bulk-operations-finish-if-done',
      sql`UPDATE license_bulk_operations o SET finished_at = now() WHERE o.id = ${id} AND o.finished_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM license_bulk_items i WHERE i.operation_id = o.id AND i.outcome IS NULL)`,
    );
  }
}

const COUNTS = `SELECT count(*) FILTER (WHERE i.outcome = 'done')::int AS done, count(*) FILTER (WHERE i.outcome = 'skipped')::int AS skipped,
  count(*) FILTER (WHERE i.outcome IS NULL)::int AS pending FROM license_bulk_items i`;
