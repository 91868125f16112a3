import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

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
    const rows: { id: string }[] = await manager.query(
      `WITH op AS (
         INSERT INTO license_bulk_operations (action, days, reason, product_scope, total, actor_type, actor, actor_ip, undo_of)
         VALUES ($1, $2, $3, $4::int[], cardinality($8::int[]), $5, $6, $7, $9) RETURNING id
       ), items AS (
         INSERT INTO license_bulk_items (operation_id, license_id) SELECT op.id, unnest($8::int[]) FROM op
       )
       SELECT id FROM op`,
      [
        operation.action,
        operation.days,
        operation.reason,
        operation.product_scope,
        operation.actor_type,
        operation.actor,
        operation.actor_ip,
        licenseIds,
        operation.undo_of,
      ],
    );
    return rows[0].id;
  }

  /** The licences an operation changed (its done items), in id order, at most `limit`: what its undo covers. */
  async changedIds(id: string, limit: number | null, manager: EntityManager = this.dataSource.manager): Promise<number[]> {
    const rows: { license_id: number }[] = await manager.query(
      `SELECT license_id FROM license_bulk_items WHERE operation_id = $1 AND outcome = 'done' ORDER BY license_id LIMIT $2`,
      [id, limit],
    );
    return rows.map((r) => r.license_id);
  }

  /** The operation that undoes this one, if any. */
  async undoneBy(id: string): Promise<string | null> {
    const rows: { id: string }[] = await this.dataSource.query(`SELECT id FROM license_bulk_operations WHERE undo_of = $1`, [id]);
    return rows[0]?.id ?? null;
  }

  /** What the item of this licence kept when the operation changed it (null: not changed, or changed before items kept it). */
  async change(id: string, licenseId: number, manager: EntityManager): Promise<BulkChangeRow | null> {
    const rows: BulkChangeRow[] = await manager.query(
      `SELECT previous_expires_at, previous_active, new_expires_at FROM license_bulk_items
        WHERE operation_id = $1 AND license_id = $2 AND outcome = 'done' AND previous_active IS NOT NULL`,
      [id, licenseId],
    );
    return rows[0] ?? null;
  }

  /** The kept changes of some licences of an operation, by licence id (the undo's preview). */
  async changes(id: string, licenseIds: readonly number[]): Promise<Map<number, BulkChangeRow>> {
    const rows: (BulkChangeRow & { license_id: number })[] = await this.dataSource.query(
      `SELECT license_id, previous_expires_at, previous_active, new_expires_at FROM license_bulk_items
        WHERE operation_id = $1 AND license_id = ANY($2::int[]) AND outcome = 'done' AND previous_active IS NOT NULL`,
      [id, licenseIds],
    );
    return new Map(rows.map(({ license_id, ...change }) => [license_id, change]));
  }

  /** Keeps, in the caller's transaction, what a claimed item's licence was before the change and the expiry it left. */
  async keep(id: string, licenseId: number, change: BulkChangeRow, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE license_bulk_items SET previous_expires_at = $3, previous_active = $4, new_expires_at = $5 WHERE operation_id = $1 AND license_id = $2`,
      [id, licenseId, change.previous_expires_at, change.previous_active, change.new_expires_at],
    );
  }

  async get(id: string): Promise<BulkOperationRow | null> {
    const rows: BulkOperationRow[] = await this.dataSource.query(`SELECT * FROM license_bulk_operations WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  /** The newest operations first. */
  recent(limit: number): Promise<(BulkOperationRow & BulkCounts)[]> {
    return this.dataSource.query(
      `SELECT o.*, c.done, c.skipped, c.pending FROM (SELECT * FROM license_bulk_operations ORDER BY id DESC LIMIT $1) o
       CROSS JOIN LATERAL (${COUNTS} WHERE i.operation_id = o.id) c ORDER BY o.id DESC`,
      [limit],
    );
  }

  async counts(id: string): Promise<BulkCounts> {
    const rows: BulkCounts[] = await this.dataSource.query(`${COUNTS} WHERE i.operation_id = $1`, [id]);
    return rows[0];
  }

  /** The skipped items with their reasons, in licence id order, at most `limit`. */
  skipped(id: string, limit: number): Promise<BulkSkippedRow[]> {
    return this.dataSource.query(
      `SELECT license_id, message FROM license_bulk_items WHERE operation_id = $1 AND outcome = 'skipped' ORDER BY license_id LIMIT $2`,
      [id, limit],
    );
  }

  /** The next pending licences after `afterLicenseId`, in id order (the primary key's order: no scan of finished items). */
  async pending(id: string, afterLicenseId: number, limit: number): Promise<number[]> {
    const rows: { license_id: number }[] = await this.dataSource.query(
      `SELECT license_id FROM license_bulk_items WHERE operation_id = $1 AND license_id > $2 AND outcome IS NULL ORDER BY license_id LIMIT $3`,
      [id, afterLicenseId, limit],
    );
    return rows.map((r) => r.license_id);
  }

  /**
   * Marks a pending item done in the caller's transaction; false when it no longer is pending (another worker has it:
   * the row lock makes the second wait for the first's commit, then find it done).
   */
  async claim(id: string, licenseId: number, manager: EntityManager): Promise<boolean> {
    // Wrapped in a SELECT: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
    const rows: { n: number }[] = await manager.query(
      `WITH claimed AS (
         UPDATE license_bulk_items SET outcome = 'done' WHERE operation_id = $1 AND license_id = $2 AND outcome IS NULL RETURNING 1
       ) SELECT count(*)::int AS n FROM claimed`,
      [id, licenseId],
    );
    return rows[0].n === 1;
  }

  /** Marks a pending item skipped, with why. */
  async skip(id: string, licenseId: number, message: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE license_bulk_items SET outcome = 'skipped', message = left($3, 500) WHERE operation_id = $1 AND license_id = $2 AND outcome IS NULL`,
      [id, licenseId, message],
    );
  }

  /** Records the end once no item is pending (the first worker to see it finished sets the time). */
  async finishIfDone(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE license_bulk_operations o SET finished_at = now() WHERE o.id = $1 AND o.finished_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM license_bulk_items i WHERE i.operation_id = o.id AND i.outcome IS NULL)`,
      [id],
    );
  }
}

const COUNTS = `SELECT count(*) FILTER (WHERE i.outcome = 'done')::int AS done, count(*) FILTER (WHERE i.outcome = 'skipped')::int AS skipped,
  count(*) FILTER (WHERE i.outcome IS NULL)::int AS pending FROM license_bulk_items i`;
