import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { License } from '../licenses/license.entity';
import type { StoreEventStatus, StoreName } from '../licenses/store-licenses/store-names';

/** The ledger of store events, each once (docs/stores.md, Replaying). Constraint names are the migration's. */
@Entity('store_events')
@Index('store_events_store_event_key', ['store', 'eventId'], { unique: true })
@Index('store_events_subscription_idx', ['store', 'subscriptionId', 'occurredAt'], { where: 'subscription_id IS NOT NULL' })
@Index('store_events_payment_idx', ['store', 'paymentId'], { where: 'payment_id IS NOT NULL' })
@Index('store_events_status_idx', ['status', 'id'])
@Index('store_events_customer_idx', ['store', 'customerId'], { where: 'customer_id IS NOT NULL' })
@Index('store_events_license_idx', ['licenseId', 'id'], { where: 'license_id IS NOT NULL' })
@Check('store_events_store_check', `store IN ('stripe', 'paddle', 'lemonsqueezy')`)
@Check('store_events_status_check', `status IN ('processed', 'ignored', 'pending', 'failed')`)
export class StoreEvent {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'store_events_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 16 })
  store: StoreName;

  @Column({ name: 'event_id', type: 'varchar', length: 255 })
  eventId: string;

  @Column({ type: 'varchar', length: 100 })
  type: string;

  @Column({ type: 'varchar', length: 10 })
  status: StoreEventStatus;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt: Date;

  /** The store's own time of the event: the order events of one subscription are applied in. */
  @Column({ name: 'occurred_at', type: 'timestamptz', nullable: true })
  occurredAt: Date | null;

  @Column({ name: 'subscription_id', type: 'varchar', length: 255, nullable: true })
  subscriptionId: string | null;

  /** The store's customer the event names: a purchase waiting for its buyer's e-mail is found by it. */
  @Column({ name: 'customer_id', type: 'varchar', length: 255, nullable: true })
  customerId: string | null;

  /** The price (and quantity) a purchase or plan change applied: a later update with the same ones is no plan change. */
  @Column({ name: 'price_id', type: 'varchar', length: 255, nullable: true })
  priceId: string | null;

  @Column({ type: 'int', nullable: true })
  quantity: number | null;

  /** What the event did to its licence (purchase, renewal, plan_change, end, refund), or customer (a buyer told), once processed. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  action: string | null;

  /** The payment the event was for (Stripe: a PaymentIntent): how a refund finds its purchase or renewal. */
  @Column({ name: 'payment_id', type: 'varchar', length: 255, nullable: true })
  paymentId: string | null;

  /** Start of the period a renewal paid for: where a refund of it sets expires_at back to. */
  @Column({ name: 'period_start', type: 'timestamptz', nullable: true })
  periodStart: Date | null;

  @Column({ name: 'license_id', type: 'int', nullable: true })
  licenseId: number | null;

  @ManyToOne(() => License, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'license_id', foreignKeyConstraintName: 'store_events_license_id_fkey' })
  license?: License;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;
}
