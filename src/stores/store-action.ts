/** An event as the ledger keeps it: the store's id, type and time, and what ties it to a subscription or a payment. */
export interface ReceivedStoreEvent {
  eventId: string;
  type: string;
  occurredAt: Date | null;
  livemode: boolean;
  subscriptionId: string | null;
  paymentId: string | null;
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
      periodEnd: Date | null;
    }
  | { kind: 'plan_change'; subscriptionId: string; priceId: string | null; quantity: number }
  | { kind: 'end'; subscriptionId: string; priceId: string | null; endedAt: Date }
  | { kind: 'refund'; paymentId: string };

/** One store's side: check the signature over the raw bytes, read the event, say what it asks for. */
export interface StoreAdapter {
  /** Whether the store's secret is set (unset: its endpoint answers 404). */
  readonly connected: boolean;
  /** The verified event; 400 INVALID_SIGNATURE (nothing stored) for a missing, wrong or stale signature. */
  verify(raw: Buffer, signature: string | undefined): ReceivedStoreEvent;
  /** An error naming why the event cannot be processed as sent (e.g. another API version), or undefined. */
  unsupported(event: ReceivedStoreEvent): string | undefined;
  toAction(event: ReceivedStoreEvent): Promise<StoreAction>;
}
