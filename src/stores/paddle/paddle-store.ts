import { Inject, Injectable } from '@nestjs/common';
import {
  Environment,
  EventName,
  type IAdjustmentNotificationResponse,
  type ICustomerNotificationResponse,
  type IEventsResponse,
  type ISubscriptionNotificationResponse,
  type ITransactionNotificationResponse,
  LogLevel,
  Paddle,
} from '@paddle/paddle-node-sdk';
import { AppError } from '../../common/errors/app-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import type { Buyer, ReceivedStoreEvent, StoreAction, StoreAdapter } from '../store-action';
import {
  hmacMatchesAny,
  invalidSignature,
  MAX_SIGNATURE_CANDIDATES,
  isObject,
  isoTime,
  parseSignedJson,
  storeId,
} from '../store-signature';

/** Seconds a Paddle-Signature timestamp may be away from now (the SDK's own check allows 5, too tight for retries and clocks). */
const WINDOW_SECONDS = 300;

const PADDLE_ID = /^[a-z]{3}_[a-z0-9]{1,64}$/;

type PaddleEvent = IEventsResponse<Record<string, unknown>>;
type Transaction = ITransactionNotificationResponse;
type Subscription = ISubscriptionNotificationResponse;

/**
 * Paddle Billing (docs/stores.md, Connect Paddle): our own check of Paddle-Signature over `ts:body`, the SDK's types
 * for the payloads and its client for customers.get (PADDLE_API_KEY).
 */
@Injectable()
export class PaddleStore implements StoreAdapter {
  readonly purchaseNeedsEmail = true;
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get connected(): boolean {
    return Boolean(this.config.stores?.paddleWebhookSecret);
  }

  /** Paddle's sandbox has its own notification destinations and secret: every event it signs is processed. */
  isLive(): boolean {
    return true;
  }

  verify(raw: Buffer, signature: string | undefined): ReceivedStoreEvent {
    if (!signature) throw invalidSignature('The Paddle-Signature header is missing');
    const fields = signature.split(';');
    // Checked before any HMAC: a header of thousands of h1 values costs nothing (docs/security.md, Store signatures cost one HMAC).
    if (fields.length > MAX_SIGNATURE_CANDIDATES + 1)
      throw invalidSignature(`The Paddle-Signature header offers more than ${MAX_SIGNATURE_CANDIDATES} signatures`);
    const parts = fields.map((p) => p.trim().split('='));
    const ts = parts.find(([k]) => k === 'ts')?.[1];
    const h1s = parts.filter(([k, v]) => k === 'h1' && v).map(([, v]) => v);
    if (!ts || !/^\d{1,12}$/.test(ts) || h1s.length === 0)
      throw invalidSignature('The Paddle-Signature header is malformed (ts=...;h1=...)');
    if (Math.abs(Date.now() / 1000 - Number(ts)) > WINDOW_SECONDS)
      throw invalidSignature(`The Paddle-Signature timestamp is more than ${WINDOW_SECONDS} s away from now`);
    const secret = this.config.stores?.paddleWebhookSecret as string;
    // Paddle sends one h1 per active secret while a secret rotates: any may match (one HMAC for all of them).
    if (!hmacMatchesAny(secret, [Buffer.from(`${ts}:`), raw], h1s)) throw invalidSignature('The Paddle-Signature does not match the body');
    const event = parseSignedJson(raw);
    if (!isPaddleEvent(event))
      throw AppError.field('body', 'The body is not a Paddle event (event_id, event_type, occurred_at and data are required)');
    const data = event.data;
    return {
      eventId: event.event_id,
      type: event.event_type,
      occurredAt: isoTime(event.occurred_at),
      livemode: true,
      subscriptionId: storeId(subscriptionOf(event)),
      paymentId: storeId(paymentOf(event)),
      // Paddle's payments are transactions (a refund's adjustment names one).
      paymentKind: storeId(paymentOf(event)) ? 'transaction' : null,
      customerId: storeId(event.event_type.startsWith('customer.') ? data.id : data.customer_id),
      payload: event as unknown as Record<string, unknown>,
    };
  }

  unsupported(): string | undefined {
    return undefined;
  }

  toAction(received: ReceivedStoreEvent): Promise<StoreAction> {
    return Promise.resolve(paddleAction(received));
  }

  /** Only an id of Paddle's shape goes into the API path (no '/' or '..' can steer the request elsewhere), and only with a key. */
  canLookupCustomer(customerId: string): boolean {
    return Boolean(this.config.stores?.paddleApiKey) && PADDLE_ID.test(customerId);
  }

  /** customers.get through the official SDK; undefined without PADDLE_API_KEY. */
  async lookupCustomer(customerId: string): Promise<Buyer | undefined> {
    const key = this.config.stores?.paddleApiKey;
    if (!key || !this.canLookupCustomer(customerId)) return undefined;
    const customer = await this.paddle(key).customers.get(customerId);
    return { name: customer.name || customer.email, email: customer.email, customerId: customer.id };
  }

  private paddle(key: string): Paddle {
    // The SDK takes a base URL where it expects an environment name (any value not in its table is used as the URL):
    // how tests point it at a stand-in (stores.paddleApiUrl); test/stores-paddle.e2e-spec.ts fails if that changes.
    const environment = (this.config.stores?.paddleApiUrl ?? Environment.production) as Environment;
    return new Paddle(key, { environment, logLevel: LogLevel.none });
  }
}

/** What a Paddle event asks for (docs/stores.md, Connect Paddle). */
function paddleAction(received: ReceivedStoreEvent): StoreAction {
  const event = received.payload as unknown as PaddleEvent;
  switch (event.event_type as EventName) {
    case EventName.TransactionCompleted:
      return transactionAction(event.data as unknown as Transaction, received);
    case EventName.SubscriptionUpdated:
    case EventName.SubscriptionCanceled: {
      const sub = event.data as unknown as Subscription;
      const subscriptionId = received.subscriptionId;
      if (!subscriptionId) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the subscription has no id' };
      const item = Array.isArray(sub.items) ? sub.items[0] : undefined;
      const priceId = storeId(item?.price?.id);
      if (event.event_type === (EventName.SubscriptionUpdated as string))
        return {
          kind: 'plan_change',
          subscriptionId,
          priceId,
          quantity: item?.quantity ?? 1,
          // The period the store now bills (docs/stores.md, Plan changes).
          periodEnd: isoTime(sub.current_billing_period?.ends_at),
        };
      return { kind: 'end', subscriptionId, priceId, endedAt: isoTime(sub.canceled_at) ?? received.occurredAt ?? new Date() };
    }
    case EventName.AdjustmentCreated:
    case EventName.AdjustmentUpdated:
      return adjustmentAction(event.data as unknown as IAdjustmentNotificationResponse);
    case EventName.CustomerCreated:
    case EventName.CustomerUpdated: {
      const customer = event.data as unknown as ICustomerNotificationResponse;
      const id = storeId(customer.id);
      if (!id || typeof customer.email !== 'string')
        return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the customer has no id or e-mail' };
      return { kind: 'customer', buyer: { name: customer.name || customer.email, email: customer.email.slice(0, 254), customerId: id } };
    }
    default:
      return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `${event.event_type} is not an event this server acts on` };
  }
}

function isPaddleEvent(value: unknown): value is PaddleEvent {
  if (!isObject(value)) return false;
  return (
    typeof value.event_id === 'string' &&
    value.event_id.length > 0 &&
    value.event_id.length <= 255 &&
    typeof value.event_type === 'string' &&
    value.event_type.length <= 100 &&
    typeof value.occurred_at === 'string' &&
    isObject(value.data)
  );
}

function subscriptionOf(event: PaddleEvent): unknown {
  if (event.event_type.startsWith('subscription.')) return event.data.id;
  if (event.event_type.startsWith('transaction.')) return event.data.subscription_id;
  return null;
}

/** A transaction is its own payment: a refund's adjustment names it. */
function paymentOf(event: PaddleEvent): unknown {
  if (event.event_type.startsWith('transaction.')) return event.data.id;
  if (event.event_type.startsWith('adjustment.')) return event.data.transaction_id;
  return null;
}

/** transaction.completed: the first of a subscription (or a one-time one) is a purchase, a recurring one a renewal. */
function transactionAction(tx: Transaction, received: ReceivedStoreEvent): StoreAction {
  const id = storeId(tx.id);
  if (!id) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the transaction has no id' };
  const renewal = tx.origin === 'subscription_recurring';
  if (!renewal && tx.origin !== 'web' && tx.origin !== 'api')
    return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `a transaction of origin ${String(tx.origin)} changes nothing` };
  const customerId = storeId(tx.customer_id);
  return {
    kind: renewal ? 'renewal' : 'purchase',
    // Transactions carry no e-mail: the customer event (or customers.get) brings it.
    buyer: { name: 'Paddle customer', email: null, customerId },
    subscriptionId: received.subscriptionId,
    orderId: id,
    lines: (Array.isArray(tx.items) ? tx.items : []).map((item) => ({
      priceId: storeId(item.price_id ?? item.price?.id),
      quantity: item.quantity ?? 1,
    })),
    periodStart: isoTime(tx.billing_period?.starts_at),
    periodEnd: isoTime(tx.billing_period?.ends_at),
  };
}

/** An approved full refund undoes its transaction; partial refunds, credits and pending approvals change nothing. */
function adjustmentAction(adjustment: IAdjustmentNotificationResponse): StoreAction {
  if (adjustment.action !== 'refund')
    return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `an adjustment of action ${String(adjustment.action)} changes nothing` };
  if (adjustment.type !== 'full') return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'a partial refund changes nothing' };
  if (adjustment.status !== 'approved')
    return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: `a refund ${String(adjustment.status)} changes nothing yet` };
  const transaction = storeId(adjustment.transaction_id);
  if (!transaction) return { kind: 'ignore', code: 'UNHANDLED_TYPE', reason: 'the refund names no transaction' };
  return { kind: 'refund', payments: [{ kind: 'transaction', id: transaction }], subscriptionId: storeId(adjustment.subscription_id) };
}
