import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A change of many licences at once, started by staff (docs/dashboard.md, Bulk actions): the action, its parameters and
 * who started it (every licence's audit entry names that actor). Written and read by SQL only (bulk-operations.repository.ts).
 */
@Entity('license_bulk_operations')
export class BulkOperation {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'license_bulk_operations_pkey' })
  id: string;

  /** renew, extend or suspend. */
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

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

/** One licence of a bulk operation: pending (outcome null), done or skipped (with the reason in `message`). */
@Entity('license_bulk_items')
export class BulkOperationItem {
  @PrimaryColumn({ name: 'operation_id', type: 'bigint', primaryKeyConstraintName: 'license_bulk_items_pkey' })
  operationId: string;

  @PrimaryColumn({ name: 'license_id', type: 'int', primaryKeyConstraintName: 'license_bulk_items_pkey' })
  licenseId: number;

  @ManyToOne(() => BulkOperation, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'operation_id', referencedColumnName: 'id', foreignKeyConstraintName: 'license_bulk_items_operation_fkey' })
  operation?: BulkOperation;

  @Column({ type: 'varchar', length: 16, nullable: true })
  outcome: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  message: string | null;
}
