import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';
import { ParentRow } from '../../common/parent-row';

/**
 * A change of many licences at once, started by staff (docs/dashboard.md, Bulk actions): the action, its parameters and
 * who started it (every licence's audit entry names that actor). Written and read by SQL only (bulk-operations.repository.ts).
 */
@Entity('license_bulk_operations')
@Unique('license_bulk_operations_undo_of_key', ['undoOf'])
export class BulkOperation {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'license_bulk_operations_pkey' })
  id: string;

  /** renew, extend, suspend, or undo (of the operation in `undo_of`). */
  @Column({ type: 'varchar', length: 16 })
  action: string;

  /** extend: the days added. */
  @Column({ type: 'int', nullable: true })
  days: number | null;

  /** suspend: the reason kept in each audit entry. */
  @Column({ type: 'varchar', length: 500, nullable: true })
  reason: string | null;

  /** The starting credential's products (null: every product); each change is made within them. */
  @Column({ name: 'product_scope', type: 'int', array: true, nullable: true })
  productScope: number[] | null;

  @Column({ type: 'int' })
  total: number;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType: string;

  @Column({ type: 'varchar', length: 320, nullable: true })
  actor: string | null;

  @Column({ name: 'actor_ip', type: 'varchar', length: 45, nullable: true })
  actorIp: string | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('finished_at', { nullable: true })
  finishedAt: Date | null;

  /** undo: the operation it moves back; at most one undo per operation (the unique constraint). */
  @Column({ name: 'undo_of', type: 'bigint', nullable: true })
  undoOf: string | null;

  @ParentRow(() => BulkOperation, 'undo_of', 'license_bulk_operations_undo_of_fkey')
  undone?: BulkOperation;
}

/** One licence of a bulk operation: pending (outcome null), done or skipped (with the reason in `message`). */
@Entity('license_bulk_items')
export class BulkOperationItem {
  @PrimaryColumn({ name: 'operation_id', type: 'bigint', primaryKeyConstraintName: 'license_bulk_items_pkey' })
  operationId: string;

  @PrimaryColumn({ name: 'license_id', type: 'int', primaryKeyConstraintName: 'license_bulk_items_pkey' })
  licenseId: number;

  @ParentRow(() => BulkOperation, 'operation_id', 'license_bulk_items_operation_fkey')
  operation?: BulkOperation;

  @Column({ type: 'varchar', length: 16, nullable: true })
  outcome: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  message: string | null;

  /** done: the licence's expiry before the change (what an undo moves it back to). */
  @TimestampColumn('previous_expires_at', { nullable: true })
  previousExpiresAt: Date | null;

  /** done: whether the licence was active before the change. */
  @Column({ name: 'previous_active', type: 'boolean', nullable: true })
  previousActive: boolean | null;

  /** done: the expiry the change left (an undo skips a licence whose expiry moved since). */
  @TimestampColumn('new_expires_at', { nullable: true })
  newExpiresAt: Date | null;
}
