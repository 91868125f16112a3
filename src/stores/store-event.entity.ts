import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import { License } from '../licenses/license.entity';
import type { StoreEventReasonCode, StoreEventStatus, StoreName, StorePaymentKind } from '../licenses/store-licenses/store-names';

/**
 * The one definition of an event that needs the seller's attention (docs/stores.md, Needs attention): failed, or ignored
 * for a price without a plan and not replayed since. The list filter, the dashboard's count and the partial index use it.
 */
export const NEEDS_ATTENTION = `status = 'failed' OR (status = 'ignored' AND reason_code = 'NO_PLAN' AND replayed_at IS NULL)`;

/** The ledger of store events, each once (docs/stores.md, Replaying). Constraint names are the migration's. */
@Entity('store_events')
@Index('store_events_store_event_key', ['store', 'eventId'], { unique: true })
@Index('store_events_subscription_idx', ['store', 'subscriptionId', 'occurredAt'], { where: 'subscription_id IS NOT NULL' })
@Index('store_events_payment_idx', ['store', 'paymentKind', 'paymentId'], { where: 'payment_id IS NOT NULL' })
@Index('store_events_status_idx', ['status', 'id'])
@Index('store_events_customer_idx', ['store', 'customerId'], { where: 'customer_id IS NOT NULL' })
@Index('store_events_license_idx', ['licenseId', 'id'], { where: 'license_id IS NOT NULL' })
@Index('store_events_attention_idx', ['id'], { where: NEEDS_ATTENTION })
@Check('store_events_store_check', `store IN ('stripe', 'paddle', 'lemonsqueezy')`)
@Check('store_events_status_check', `status IN ('processed', 'ignored', 'pending', 'failed')`)
@Check(
  'store_events_reason_code_check',
  `reason_code IN (
        'NO_PLAN', 'UNHANDLED_TYPE', 'NOT_PAID', 'TEST_MODE', 'OUT_OF_ORDER', 'AWAITING_CUSTOMER', 'UNKNOWN_SUBSCRIPTION',
        'API_VERSION_MISMATCH', 'STORE_API_KEY_MISSING', 'STORE_API_ERROR', 'INVALID_QUANTITY', 'INVALID_PAYLOAD', 'OTHER_PRODUCT')`,
)
@Check('store_events_payment_kind_check', `payment_kind IN ('order', 'invoice', 'transaction')`)
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

  @TimestampColumn('received_at', { default: () => 'now()' })
  receivedAt: Date;

  /** The store's own time of the event: the order events of one subscription are applied in. */
  @TimestampColumn('occurred_at', { nullable: true })
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

  /** What paymentId names (order, subscription invoice or transaction): a refund matches only its own kind. */
  @Column({ name: 'payment_kind', type: 'varchar', length: 16, nullable: true })
  paymentKind: StorePaymentKind | null;

  /** Start of the period a renewal paid for: where a refund of it sets expires_at back to. */
  @TimestampColumn('period_start', { nullable: true })
  periodStart: Date | null;

  @Column({ name: 'license_id', type: 'int', nullable: true })
  licenseId: number | null;

  @ManyToOne(() => License, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'license_id', foreignKeyConstraintName: 'store_events_license_id_fkey' })
  license?: License;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Why the event is not processed, as a code (docs/stores.md, Reason codes); null once processed. */
  @Column({ name: 'reason_code', type: 'text', nullable: true })
  reasonCode: StoreEventReasonCode | null;

  /** When staff last replayed the event: a replayed event for a price without a plan no longer needs attention. */
  @TimestampColumn('replayed_at', { nullable: true })
  replayedAt: Date | null;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;
}
