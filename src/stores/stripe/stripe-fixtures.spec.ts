import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Stripe from 'stripe';
import { testConfigFor } from '../../../test/support/unit-config';
import { LemonSqueezyStore } from '../lemonsqueezy/lemonsqueezy-store';
import type { StoreAsk } from '../store-action';
import { StripeStore, STRIPE_API_VERSION } from './stripe-store';

/**
 * The store fixtures a seller signs in docs/stores.md (First sale in five minutes) are events the adapters read as a
 * purchase; the Stripe one is at the pinned API version, so bumping the SDK makes this fail until it is refreshed
 * (docs/stores.md, Stripe API versions).
 */
const FIXTURES = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'stores');
const fixture = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');
/** A purchase of these fixtures needs nothing from the store's API. */
const noStoreCalls: StoreAsk = () => Promise.reject(new Error('no call to the store API expected'));

describe('store fixtures (test/fixtures/stores)', () => {
  const stores = { stripeWebhookSecret: 'whsec_fixture', lemonsqueezyWebhookSecret: 'ls_fixture', acceptTestEvents: false };
  const config = testConfigFor({ stores });

  it('stripe/invoice.paid.json: the pinned API version, verified and read as a live subscription purchase', async () => {
    const raw = fixture('stripe/invoice.paid.json');
    expect((JSON.parse(raw) as { api_version: string }).api_version).toBe(STRIPE_API_VERSION);
    const store = new StripeStore(config);
    const header = new Stripe('sk_unused').webhooks.generateTestHeaderString({ payload: raw, secret: 'whsec_fixture' });
    const received = store.verify(Buffer.from(raw), header);
    expect(store.unsupported(received)).toBeUndefined();
    expect(received).toMatchObject({ type: 'invoice.paid', livemode: true, subscriptionId: 'sub_1SfxPzLk8mN3pR7tQrStUvWx' });
    expect(await store.toAction(received, noStoreCalls)).toMatchObject({
      kind: 'purchase',
      buyer: { name: 'Jelena Marković', email: 'jelena@shop.example' },
      lines: [{ priceId: 'price_1SfxPaLk8mN3pR7tRetailM', quantity: 1 }],
    });
  });

  it('lemonsqueezy/order_created.json: verified and read as a one-time purchase of its variant', async () => {
    const raw = fixture('lemonsqueezy/order_created.json');
    const store = new LemonSqueezyStore(config);
    const received = store.verify(Buffer.from(raw), createHmac('sha256', 'ls_fixture').update(raw).digest('hex'));
    expect(received).toMatchObject({ type: 'order_created', livemode: true, subscriptionId: null });
    expect(await store.toAction(received)).toMatchObject({
      kind: 'purchase',
      buyer: { name: 'Marko Jovanović', email: 'marko@shop.example' },
      orderId: '4812035',
      lines: [{ priceId: '412877', quantity: 1 }],
    });
  });
});
