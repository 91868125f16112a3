import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';

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

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/**
 * One event, written with the change that caused it by the event recorder (the outbox); its id is the `webhook-id`.
 * Pending until fanned out to the endpoints active then (docs/webhooks.md, The event spine).
 */
@Entity('webhook_events')
@Index('webhook_events_pending_fanout_idx', ['createdAt'], { where: 'fanned_out_at IS NULL' })
export class WebhookEvent {
  @PrimaryColumn({ type: 'varchar', length: 40, primaryKeyConstraintName: 'webhook_events_pkey' })
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

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'fanned_out_at', type: 'timestamptz', nullable: true })
  fannedOutAt: Date | null;
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

  @ManyToOne(() => WebhookEvent, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id', foreignKeyConstraintName: 'FK_webhook_deliveries_event' })
  event?: WebhookEvent;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryStatus;

  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ name: 'last_status_code', type: 'int', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt: Date | null;
}

/** Time-driven events already sent: one row per licence, kind and expiry date, so each fires once. */
@Entity('webhook_expiry_notices')
@Check('webhook_expiry_notices_kind_check', `kind IN ('expiring_soon', 'expired')`)
export class WebhookExpiryNotice {
  @PrimaryColumn({ name: 'license_id', type: 'int', primaryKeyConstraintName: 'webhook_expiry_notices_pkey' })
  licenseId: number;

  @PrimaryColumn({ type: 'varchar', length: 16, primaryKeyConstraintName: 'webhook_expiry_notices_pkey' })
  kind: 'expiring_soon' | 'expired';

  @PrimaryColumn({ name: 'expires_at', type: 'timestamptz', primaryKeyConstraintName: 'webhook_expiry_notices_pkey' })
  expiresAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
