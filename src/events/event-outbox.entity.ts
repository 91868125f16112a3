import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * One event, written with the change that caused it by the event recorder (the outbox); its id is the `webhook-id`.
 * Pending until the fan-out has handed it to the consumers; kept afterwards only while a consumer refers to it
 * (a webhook delivery), deleted otherwise (docs/webhooks.md, The event spine).
 */
@Entity('event_outbox')
@Index('event_outbox_pending_idx', ['createdAt'], { where: 'fanned_out_at IS NULL' })
export class OutboxEvent {
  @PrimaryColumn({ type: 'varchar', length: 40, primaryKeyConstraintName: 'event_outbox_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 64 })
  type: string;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @Column({ name: 'license_id', type: 'int', nullable: true })
  licenseId: number | null;

  /** The product the event concerns, what endpoints limited to products filter on; null for events about no product. */
  @Column({ name: 'product_id', type: 'int', nullable: true })
  productId: number | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('fanned_out_at', { nullable: true })
  fannedOutAt: Date | null;
}
