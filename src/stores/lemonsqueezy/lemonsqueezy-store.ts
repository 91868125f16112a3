import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { AppError } from '../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import type { StorePaymentKind } from '../../licenses/store-names';
import type { ReceivedStoreEvent, StoreAction, StoreAdapter } from '../store-action';
import { hmacMatches, invalidSignature, isObject, isoTime, parseSignedJson, storeId } from '../store-signature';
import type {
  LemonSqueezyOrder,
  LemonSqueezySubscription,
  LemonSqueezySubscriptionInvoice,
  LemonSqueezyWebhook,
} from './lemonsqueezy-payloads';

/**
 * Lemon Squeezy (docs/stores.md, Connect Lemon Squeezy): X-Signature is the hex HMAC-SHA256 of the raw body (no
 * timestamp exists), and a body carries no event id: the hex SHA-256 of the raw body stands for it, so the same
 * delivery twice is one event.
 */
@Injectable()
export class LemonSqueezyStore implements StoreAdapter {
  readonly purchaseNeedsEmail = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get connected(): boolean {
    return Boolean(this.config.stores?.lemonsqueezyWebhookSecret);
  }

  isLive(payload: Record<string, unknown>): boolean {
    return (payload as unknown as LemonSqueezyWebhook).meta?.test_mode !== true;
  }

  verify(raw: Buffer, signature: string | undefined): ReceivedStoreEvent {
    if (!signature) throw invalidSignature('The X-Signature header is missing');
    if (!hmacMatches(this.config.stores?.lemonsqueezyWebhookSecret as string, raw, signature.trim()))
      throw invalidSignature('The X-Signature does not match the body');
    const event = parseSignedJson(raw);
    if (!isWebhook(event)) throw AppError.field('body', 'The body is not a Lemon Squeezy event (meta.event_name and data are required)');
    const attributes = event.data.attributes;
    return {
      eventId: createHash('sha256').update(raw).digest('hex'),
      type: event.meta.event_name,
      // Lemon Squeezy sends no event time: the object's own last change orders the events of a subscription.
      occurredAt: isoTime(attributes.updated_at) ?? isoTime(attributes.created_at),
      livemode: this.isLive(event as unknown as Record<string, unknown>),
      subscriptionId: storeId(subscriptionOf(event)),
      ...paymentOf(event),
      customerId: storeId(attributes.customer_id),
      payload: event as unknown as Record<string, unknown>,
    };
  }

  unsupported(): string | undefined {
    return undefined;
  }

  toAction(received: ReceivedStoreEvent): Promise<StoreAction> {
    return Promise.resolve(action(received));
  }

  /** The next renewal a subscription event names (renews_at): how far a renewal payment extends (docs/stores.md, Plan changes). */
  renewsAt(payload: Record<string, unknown>): Date | null {
    const event = payload as unknown as LemonSqueezyWebhook;
    if (event.data?.type !== 'subscriptions') return null;
    return isoTime((event.data.attributes as Partial<LemonSqueezySubscription> | undefined)?.renews_at);
  }
}

function action(received: ReceivedStoreEvent): StoreAction {
  const event = received.payload as unknown as LemonSqueezyWebhook;
  const id = storeId(event.data.id);
  if (!id) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the object has no id' };
  switch (event.meta.event_name) {
    case 'order_created': {
      const order = event.data.attributes as unknown as LemonSqueezyOrder;
      if (order.status !== 'paid') return { kind: 'ignore', code: 'NOT_PAID', reason: `an order ${String(order.status)} changes nothing` };
      // A subscription's first order comes too: the order's licence is then the subscription's (docs/stores.md).
      return purchase(order, null, id, order.first_order_item?.variant_id, order.first_order_item?.quantity, null, null);
    }
    case 'subscription_created': {
      const sub = event.data.attributes as unknown as LemonSqueezySubscription;
      const orderId = storeId(sub.order_id);
      if (!orderId) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the subscription names no order' };
      const quantity = sub.first_subscription_item?.quantity;
      return purchase(sub, id, orderId, sub.variant_id, quantity, isoTime(sub.created_at), isoTime(sub.renews_at));
    }
    case 'subscription_payment_success': {
      const invoice = event.data.attributes as unknown as LemonSqueezySubscriptionInvoice;
      if (invoice.billing_reason !== 'renewal')
        return {
          kind: 'ignore',
          code: 'UNHANDLED_TYPE',
          reason: `a payment for ${String(invoice.billing_reason)} changes nothing (subscription_created buys)`,
        };
      if (invoice.status !== undefined && invoice.status !== 'paid')
        return { kind: 'ignore', code: 'NOT_PAID', reason: `a payment ${String(invoice.status)} changes nothing` };
      if (!received.subscriptionId) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the payment names no subscription' };
      return {
        kind: 'renewal',
        buyer: buyerOf(invoice),
        subscriptionId: received.subscriptionId,
        orderId: id,
        // An invoice names no variant: a renewal of a subscription never seen finds no plan.
        lines: [],
        // An invoice names no period: the subscription's latest known renews_at ends it, else the licence's
        // license_type from the payment (docs/stores.md, Plan changes).
        periodStart: isoTime(invoice.created_at),
        periodEnd: null,
      };
    }
    case 'subscription_updated': {
      const sub = event.data.attributes as unknown as LemonSqueezySubscription;
      return {
        kind: 'plan_change',
        subscriptionId: id,
        priceId: storeId(sub.variant_id),
        quantity: sub.first_subscription_item?.quantity ?? 1,
        periodEnd: isoTime(sub.renews_at),
      };
    }
    case 'subscription_expired': {
      const sub = event.data.attributes as unknown as LemonSqueezySubscription;
      const endedAt = isoTime(sub.ends_at) ?? received.occurredAt ?? new Date();
      return { kind: 'end', subscriptionId: id, priceId: storeId(sub.variant_id), endedAt };
    }
    case 'order_refunded':
    case 'subscription_payment_refunded': {
      const paid = event.data.attributes as unknown as { status?: string };
      if (paid.status !== 'refunded') return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'a partial refund changes nothing' };
      // An order and a subscription invoice may share an id: each refund matches only its own kind (docs/stores.md, Refunds).
      if (!received.paymentKind) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the refund names no order or invoice' };
      return { kind: 'refund', payments: [{ kind: received.paymentKind, id }], subscriptionId: received.subscriptionId };
    }
    default:
      return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `${event.meta.event_name} is not an event this server acts on` };
  }
}

function purchase(
  paid: { user_name: string; user_email: string; customer_id: number },
  subscriptionId: string | null,
  orderId: string,
  variantId: unknown,
  quantity: unknown,
  periodStart: Date | null,
  periodEnd: Date | null,
): StoreAction {
  return {
    kind: 'purchase',
    buyer: buyerOf(paid),
    subscriptionId,
    orderId,
    lines: [{ priceId: storeId(variantId), quantity: quantity ?? 1 }],
    periodStart,
    periodEnd,
  };
}

function buyerOf(paid: { user_name?: unknown; user_email?: unknown; customer_id?: unknown }) {
  const email = typeof paid.user_email === 'string' && paid.user_email ? paid.user_email.slice(0, 254) : null;
  const name = typeof paid.user_name === 'string' && paid.user_name ? paid.user_name : (email ?? 'Lemon Squeezy customer');
  return { name, email, customerId: storeId(paid.customer_id) };
}

function isWebhook(value: unknown): value is LemonSqueezyWebhook<Record<string, unknown>> {
  if (!isObject(value) || !isObject(value.meta) || !isObject(value.data)) return false;
  const name = value.meta.event_name;
  return typeof name === 'string' && name.length > 0 && name.length <= 100 && isObject(value.data.attributes);
}

function subscriptionOf(event: LemonSqueezyWebhook<Record<string, unknown>>): unknown {
  if (event.data.type === 'subscriptions') return event.data.id;
  if (event.data.type === 'subscription-invoices') return event.data.attributes.subscription_id;
  return null;
}

/** The payment an event was for, with its kind: an order (a subscription's first order too), or a subscription invoice. */
function paymentOf(event: LemonSqueezyWebhook<Record<string, unknown>>): Pick<ReceivedStoreEvent, 'paymentId' | 'paymentKind'> {
  const payment = (kind: StorePaymentKind, id: unknown) => {
    const paymentId = storeId(id);
    return { paymentId, paymentKind: paymentId ? kind : null };
  };
  if (event.data.type === 'orders') return payment('order', event.data.id);
  if (event.data.type === 'subscription-invoices') return payment('invoice', event.data.id);
  if (event.meta.event_name === 'subscription_created') return payment('order', event.data.attributes.order_id);
  return { paymentId: null, paymentKind: null };
}
