/** An event as the ledger keeps it: the store's id, type and time, and what ties it to a subscription, a payment or a customer. */
export interface ReceivedStoreEvent {
  eventId: string;
  type: string;
  occurredAt: Date | null;
  livemode: boolean;
  subscriptionId: string | null;
  paymentId: string | null;
  customerId: string | null;
  payload: Record<string, unknown>;
}

export interface Buyer {
  name: string;
  email: string | null;
  customerId: string | null;
}

/** What a store event asks of the licence aggregate (docs/stores.md, What each event does). */
export type StoreAction =
  | { kind: 'ignore'; reason: string }
  | { kind: 'fail'; reason: string }
  | {
      kind: 'purchase' | 'renewal';
      buyer: Buyer;
      subscriptionId: string | null;
      orderId: string;
      /** The plan is the first line whose price has one. */
      lines: { priceId: string | null; quantity: number }[];
      periodStart: Date | null;
      /** null for a renewal: the licence's license_type from periodStart (a store that names no period end). */
      periodEnd: Date | null;
    }
  | { kind: 'plan_change'; subscriptionId: string; priceId: string | null; quantity: number }
  | { kind: 'end'; subscriptionId: string; priceId: string | null; endedAt: Date }
  | {
      kind: 'refund';
      paymentId: string;
      /** Another id the ledger may know the same payment by, asked of the store only when paymentId finds nothing. */
      otherPaymentId?: () => Promise<string | null>;
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
  toAction(event: ReceivedStoreEvent): Promise<StoreAction>;
  /** The buyer asked of the store's API; undefined when the API cannot be asked (no key). */
  lookupCustomer?(customerId: string): Promise<Buyer | undefined>;
}
