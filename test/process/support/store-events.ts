import { createHmac, randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../../../src/stores/stripe/stripe-store';

/**
 * A first purchase at each store, in the shape the store sends it and signed the way it signs (docs/stores.md): Stripe's
 * `Stripe-Signature` made by Stripe's own SDK, Paddle's `Paddle-Signature` (`ts=...;h1=` HMAC-SHA256 of `ts:body`), Lemon
 * Squeezy's `X-Signature` (hex HMAC-SHA256 of the raw body).
 */
export interface SignedDelivery {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The subscription the purchase starts: the licence carries it as `store_subscription_id`. */
  subscription: string;
  email: string;
}

const DAY = 86_400;
const unique = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const nowSeconds = () => Math.floor(Date.now() / 1000);
const hmacHex = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

/** `invoice.paid` for a new subscription (billing_reason subscription_create), as Stripe sends it. */
export function stripePurchase(secret: string, price: string): SignedDelivery {
  const subscription = unique('sub');
  const email = `${subscription}@stripe-buyer.example`;
  const start = nowSeconds();
  const event = {
    id: unique('evt'),
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created: start,
    livemode: true,
    type: 'invoice.paid',
    data: {
      object: {
        id: unique('in'),
        object: 'invoice',
        billing_reason: 'subscription_create',
        customer: unique('cus'),
        customer_email: email,
        customer_name: 'Stripe Buyer',
        livemode: true,
        parent: { type: 'subscription_details', subscription_details: { subscription, metadata: {} } },
        lines: {
          object: 'list',
          has_more: false,
          data: [
            {
              id: unique('il'),
              object: 'line_item',
              quantity: 1,
              period: { start, end: start + 30 * DAY },
              pricing: { type: 'price_details', price_details: { price, product: 'prod_x' }, unit_amount_decimal: '1000' },
            },
          ],
        },
        payments: {
          object: 'list',
          has_more: false,
          data: [{ object: 'invoice_payment', payment: { type: 'payment_intent', payment_intent: unique('pi') } }],
        },
      } satisfies Partial<Record<keyof Stripe.Invoice, unknown>>,
    },
  };
  const body = JSON.stringify(event);
  const signature = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret });
  return { path: '/api/v1/stores/stripe/events', headers: { 'stripe-signature': signature }, body, subscription, email };
}

/** Paddle's `customer.created` (the buyer's e-mail) and then `transaction.completed` of a new subscription. */
export function paddlePurchase(secret: string, price: string): SignedDelivery[] {
  const subscription = unique('sub');
  const customer = unique('ctm');
  const email = `${customer}@paddle-buyer.example`;
  const start = nowSeconds();
  const event = (type: string, at: number, data: object) => ({
    event_id: unique('evt'),
    event_type: type,
    occurred_at: iso(at),
    notification_id: unique('ntf'),
    data,
  });
  const told = event('customer.created', start - 1, {
    id: customer,
    email,
    name: 'Paddle Buyer',
    status: 'active',
    marketing_consent: false,
    locale: 'en',
    created_at: iso(start),
    updated_at: iso(start),
  });
  const bought = event('transaction.completed', start, {
    id: unique('txn'),
    status: 'completed',
    customer_id: customer,
    origin: 'web',
    subscription_id: subscription,
    collection_mode: 'automatic',
    currency_code: 'EUR',
    billing_period: { starts_at: iso(start), ends_at: iso(start + 30 * DAY) },
    items: [{ price_id: price, price: { id: price }, quantity: 1 }],
    payments: [],
    created_at: iso(start),
    updated_at: iso(start),
  });
  return [told, bought].map((e) => {
    const body = JSON.stringify(e);
    const ts = nowSeconds();
    const headers = { 'paddle-signature': `ts=${ts};h1=${hmacHex(secret, `${ts}:${body}`)}` };
    return { path: '/api/v1/stores/paddle/events', headers, body, subscription, email };
  });
}

/** Lemon Squeezy's `subscription_created` of a new subscription to `variant`. */
export function lemonSqueezyPurchase(secret: string, variant: number): SignedDelivery {
  const id = Number.parseInt(randomBytes(4).toString('hex'), 16);
  const email = `ls${id}@lemonsqueezy-buyer.example`;
  const at = nowSeconds();
  const event = {
    meta: { event_name: 'subscription_created', test_mode: false, webhook_id: 'wh_1' },
    data: {
      type: 'subscriptions',
      id: String(id),
      attributes: {
        customer_id: 42,
        user_name: 'Lemon Buyer',
        user_email: email,
        store_id: 1,
        order_id: id + 1,
        order_item_id: id + 2,
        product_id: 7,
        variant_id: variant,
        status: 'active',
        renews_at: iso(at + 30 * DAY),
        ends_at: null,
        first_subscription_item: { id: id + 3, subscription_id: id, price_id: 900, quantity: 1 },
        created_at: iso(at),
        updated_at: iso(at),
      },
    },
  };
  const body = JSON.stringify(event);
  return {
    path: '/api/v1/stores/lemonsqueezy/events',
    headers: { 'x-signature': hmacHex(secret, body) },
    body,
    subscription: String(id),
    email,
  };
}
