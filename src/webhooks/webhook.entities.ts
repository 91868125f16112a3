import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import { OutboxEvent } from '../events/event-outbox.entity';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A receiver of events (docs/webhooks.md, Endpoints). The secret signs every delivery (Standard Webhooks). */
@Entity('webhook_endpoints')
@Check('webhook_endpoints_events_check', `cardinality(events) > 0`)
export class WebhookEndpoint {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'webhook_endpoints_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description: string | null;

  @Column({ type: 'text', array: true })
  events: string[];

  /** Sealed under KEYRING_SECRET and bound to `id` (webhook-secrets.ts); plain `whsec_` text only from before the upgrade. */
  @Column({ type: 'varchar', length: 200 })
  secret: string;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  /** The products whose events it receives, those of the limited token that made it; null: every product (docs/webhooks.md, Product limits). */
  @Column({ name: 'product_ids', type: 'int', array: true, nullable: true })
  productIds: number[] | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('updated_at', { default: () => 'now()' })
  updatedAt: Date;
}

/** An event for one endpoint: its attempts, outcome and next attempt. */
@Entity('webhook_deliveries')
@Unique('webhook_deliveries_endpoint_event_key', ['endpointId', 'eventId'])
@Index('webhook_deliveries_endpoint_idx', ['endpointId', 'id'])
@Index('webhook_deliveries_pending_idx', ['createdAt'], { where: `status = 'pending'` })
@Check('webhook_deliveries_status_check', `status IN ('pending', 'delivered', 'failed')`)
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'webhook_deliveries_pkey' })
  id: string;

  @Column({ name: 'endpoint_id', type: 'int' })
  endpointId: number;

  @ManyToOne(() => WebhookEndpoint, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id', foreignKeyConstraintName: 'FK_webhook_deliveries_endpoint' })
  endpoint?: WebhookEndpoint;

  @Column({ name: 'event_id', type: 'varchar', length: 40 })
  eventId: string;

  @ManyToOne(() => OutboxEvent, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id', foreignKeyConstraintName: 'FK_webhook_deliveries_event' })
  event?: OutboxEvent;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryStatus;

  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ name: 'last_status_code', type: 'int', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  @TimestampColumn('next_attempt_at', { nullable: true })
  nextAttemptAt: Date | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('delivered_at', { nullable: true })
  deliveredAt: Date | null;
}
