/** The stores a plan or an event comes from (docs/stores.md). */
export const STORE_NAMES = ['stripe', 'paddle', 'lemonsqueezy'] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/** What a store-made licence becomes when its subscription ends (docs/stores.md, What each event does). */
export const ON_END_ACTIONS = ['expire', 'suspend', 'revoke'] as const;
export type OnEndAction = (typeof ON_END_ACTIONS)[number];

export const STORE_EVENT_STATUSES = ['processed', 'ignored', 'pending', 'failed'] as const;
export type StoreEventStatus = (typeof STORE_EVENT_STATUSES)[number];
