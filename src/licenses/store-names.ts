/** The stores a plan or an event comes from (docs/stores.md). */
export const STORE_NAMES = ['stripe', 'paddle', 'lemonsqueezy'] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/** What a store-made licence becomes when its subscription ends (docs/stores.md, What each event does). */
export const ON_END_ACTIONS = ['expire', 'suspend', 'revoke'] as const;
export type OnEndAction = (typeof ON_END_ACTIONS)[number];

export const STORE_EVENT_STATUSES = ['processed', 'ignored', 'pending', 'failed'] as const;
export type StoreEventStatus = (typeof STORE_EVENT_STATUSES)[number];

/**
 * Why a stored event is not processed (docs/stores.md, Reason codes): ignored, pending and failed events each carry one;
 * a processed event none.
 */
export const STORE_EVENT_REASON_CODES = [
  // ignored
  'NO_PLAN',
  'UNHANDLED_TYPE',
  'NOT_PAID',
  'TEST_MODE',
  'OUT_OF_ORDER',
  // pending
  'AWAITING_CUSTOMER',
  'UNKNOWN_SUBSCRIPTION',
  // failed
  'API_VERSION_MISMATCH',
  'STORE_API_KEY_MISSING',
  'STORE_API_ERROR',
  'INVALID_QUANTITY',
  'INVALID_PAYLOAD',
  'OTHER_PRODUCT',
] as const;
export type StoreEventReasonCode = (typeof STORE_EVENT_REASON_CODES)[number];

/** What a payment id names (docs/stores.md, Refunds): one store may use the same id for an order and an invoice. */
export const STORE_PAYMENT_KINDS = ['order', 'invoice', 'transaction'] as const;
export type StorePaymentKind = (typeof STORE_PAYMENT_KINDS)[number];
