import type { StoreEventReasonCode, StorePaymentKind } from '../licenses/store-names';

/** A payment as the ledger knows it (docs/stores.md, Refunds): the same id may name an order and an invoice of one store. */
export interface StorePayment {
  kind: StorePaymentKind;
  id: string;
}

/** An event as the ledger keeps it: the store's id, type and time, and what ties it to a subscription, a payment or a customer. */
export interface ReceivedStoreEvent {
  eventId: string;
  type: string;
  occurredAt: Date | null;
  livemode: boolean;
  subscriptionId: string | null;
  paymentId: string | null;
  /** What paymentId names; null for an event whose payment may be of either kind (a Stripe refund's PaymentIntent). */
  paymentKind: StorePaymentKind | null;
  customerId: string | null;
  payload: Record<string, unknown>;
}

export interface Buyer {
  name: string;
  email: string | null;
  customerId: string | null;
}

/** Why an event changes nothing (docs/stores.md, Reason codes). */
export type IgnoreCode = Extract<StoreEventReasonCode, 'NO_PLAN' | 'UNHANDLED_TYPE' | 'NOT_PAID' | 'TEST_MODE' | 'OUT_OF_ORDER'>;
/** Why an event cannot be applied as sent: the store gets a 500 and retries (docs/stores.md, Reason codes). */
export type FailCode = Extract<
  StoreEventReasonCode,
  'API_VERSION_MISMATCH' | 'STORE_API_KEY_MISSING' | 'STORE_API_ERROR' | 'INVALID_QUANTITY' | 'INVALID_PAYLOAD' | 'OTHER_PRODUCT'
>;

/**
 * Asks the store's API, never inside a database transaction (docs/stores.md, Calls to the store's API): the first time
 * a call is asked for, processing stops, the event's row commits, the call runs, and the event is decided again with
 * the answer. `key` names the call's answer for that second pass, and what could not be read if the call fails.
 */
export type StoreAsk = <T>(key: string, call: () => Promise<T>) => Promise<T>;

/** What a store event asks of the licence aggregate (docs/stores.md, What each event does). */
export type StoreAction =
  | { kind: 'ignore'; code: IgnoreCode; reason: string }
  | { kind: 'fail'; code: FailCode; reason: string }
  | {
      kind: 'purchase' | 'renewal';
      buyer: Buyer;
      subscriptionId: string | null;
      orderId: string;
      /** The plan is the first line whose price has one. */
      lines: { priceId: string | null; quantity: unknown; periodStart?: Date | null; periodEnd?: Date | null }[];
      periodStart: Date | null;
      /**
       * null for a renewal: the licence's license_type from periodStart (a store that names no period end), or, when
       * `periodOfPlanLines`, the latest period of the lines whose price has a plan (a Stripe plan change's invoice).
       */
      periodEnd: Date | null;
      periodOfPlanLines?: boolean;
    }
  | {
      kind: 'plan_change';
      subscriptionId: string;
      priceId: string | null;
      quantity: unknown;
      /** The end of the period the store now bills (docs/stores.md, Plan changes); null when the event names none. */
      periodEnd: Date | null;
    }
  | { kind: 'end'; subscriptionId: string; priceId: string | null; endedAt: Date }
  | {
      kind: 'refund';
      /** The payments the refund may undo, each of its own kind; the first the ledger knows is the one. */
      payments: StorePayment[];
      /** The subscription the refund names, if any: a payment of another subscription is not this refund's. */
      subscriptionId: string | null;
      /** Asked of the store only when none of `payments` is known: another id the ledger may know the payment by. */
      lookup?: { key: string; missingKey?: string; call: () => Promise<StorePayment | null> };
    }
  /** The store tells who a customer is: a purchase waiting for its buyer's e-mail can proceed. */
  | { kind: 'customer'; buyer: Buyer & { customerId: string } };

/** One store's side: check the signature over the raw bytes, read the event, say what it asks for. */
export interface StoreAdapter {
  /** Whether the store's secret is set (unset: its endpoint answers 404). */
  readonly connected: boolean;
  /** True when a purchase must wait for the buyer's e-mail (the store's purchase events do not carry it). */
  readonly purchaseNeedsEmail: boolean;
  /** The verified event; 400 INVALID_SIGNATURE (nothing stored) for a missing, wrong or stale signature. */
  verify(raw: Buffer, signature: string | undefined): ReceivedStoreEvent;
  /** Whether a stored payload is a live-mode event (test-mode ones wait for STORES_ACCEPT_TEST_EVENTS). */
  isLive(payload: Record<string, unknown>): boolean;
  /** An error naming why the event cannot be processed as sent (e.g. another API version), or undefined. */
  unsupported(event: ReceivedStoreEvent): string | undefined;
  toAction(event: ReceivedStoreEvent, ask: StoreAsk): Promise<StoreAction>;
  /** Whether the store's API can be asked for this customer (its key is set, the id has the store's shape). */
  canLookupCustomer?(customerId: string): boolean;
  /** The buyer asked of the store's API; undefined when the API cannot be asked (no key). */
  lookupCustomer?(customerId: string): Promise<Buyer | undefined>;
  /** The next renewal a stored subscription event names, for a store whose payments name no period end (Lemon Squeezy). */
  renewsAt?(payload: Record<string, unknown>): Date | null;
}
