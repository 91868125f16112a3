import type { AppConfig } from '../config/app-config';
import type { StoreName } from '../licenses/store-names';

type StoresConfig = NonNullable<AppConfig['stores']>;

/** The API hosts the server calls for the features that need one (docs/stores.md, What each store feature needs). */
export const STORE_API_HOSTS: Partial<Record<StoreName, string>> = { stripe: 'api.stripe.com', paddle: 'api.paddle.com' };

/** A store feature and what it needs besides the store's webhook secret. */
export interface StoreFeature {
  store: StoreName;
  feature: string;
  /** The API key it reads with, or null: everything it needs is in the store's events. */
  apiKey: { name: string; key: keyof StoresConfig } | null;
  /** What happens while the key is unset. */
  without: string;
}

const WEBHOOK_SECRETS: Record<StoreName, keyof StoresConfig> = {
  stripe: 'stripeWebhookSecret',
  paddle: 'paddleWebhookSecret',
  lemonsqueezy: 'lemonsqueezyWebhookSecret',
};

/** Every store feature with what it needs (docs/stores.md, What each store feature needs); the Stores page shows it. */
export const STORE_FEATURES: readonly StoreFeature[] = [
  {
    store: 'stripe',
    feature: 'Subscriptions: purchase, renewal, plan change, end, and refunds of payments the ledger knows',
    apiKey: null,
    without: '',
  },
  {
    store: 'stripe',
    feature: 'One-time Checkout payments (the session’s line items)',
    apiKey: { name: 'STRIPE_API_KEY', key: 'stripeApiKey' },
    without: 'the event is stored failed (STORE_API_KEY_MISSING) and Stripe retries it',
  },
  {
    store: 'stripe',
    feature: 'Refunds of a payment whose invoice event did not list it (the invoice it paid)',
    apiKey: { name: 'STRIPE_API_KEY', key: 'stripeApiKey' },
    without: 'the refund is stored failed (STORE_API_KEY_MISSING) and Stripe retries it',
  },
  {
    store: 'paddle',
    feature: 'Every Paddle action, from its events',
    apiKey: null,
    without: '',
  },
  {
    store: 'paddle',
    feature: 'The buyer’s e-mail before Paddle’s customer event arrives (customers.get)',
    apiKey: { name: 'PADDLE_API_KEY', key: 'paddleApiKey' },
    without: 'the purchase waits pending (AWAITING_CUSTOMER) for the customer event',
  },
  {
    store: 'lemonsqueezy',
    feature: 'Every Lemon Squeezy action, from its events',
    apiKey: null,
    without: '',
  },
];

/** One row of the Stores page's feature table: what the feature needs and whether this server has it. */
export interface StoreFeatureState {
  store: StoreName;
  feature: string;
  needs: string;
  outbound: string | null;
  ready: boolean;
  /** Why it does not work yet, when it does not. */
  missing: string | null;
}

/** The features with their state under `stores` (the configuration this server runs with). */
export function storeFeatureStates(stores: AppConfig['stores']): StoreFeatureState[] {
  return STORE_FEATURES.map((f) => {
    const secretSet = Boolean(stores?.[WEBHOOK_SECRETS[f.store]]);
    const keySet = f.apiKey === null || Boolean(stores?.[f.apiKey.key]);
    const secretName = `${f.store.toUpperCase()}_WEBHOOK_SECRET`;
    const missing = !secretSet
      ? `${secretName} is not set: the endpoint answers 404`
      : !keySet
        ? `${f.apiKey?.name} is not set: ${f.without}`
        : null;
    return {
      store: f.store,
      feature: f.feature,
      needs: f.apiKey ? `${secretName} and ${f.apiKey.name}` : secretName,
      outbound: f.apiKey ? `HTTPS to ${STORE_API_HOSTS[f.store]}` : null,
      ready: missing === null,
      missing,
    };
  });
}
