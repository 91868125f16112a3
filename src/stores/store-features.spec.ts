import { storeFeatureStates } from './store-features';

// docs/stores.md, What each store feature needs.
describe('storeFeatureStates', () => {
  const state = (stores: Parameters<typeof storeFeatureStates>[0], feature: string) =>
    storeFeatureStates(stores).find((f) => f.feature.startsWith(feature));

  it('nothing configured: every feature names the missing secret first', () => {
    for (const f of storeFeatureStates(undefined)) {
      expect(f.ready).toBe(false);
      expect(f.missing).toBe(`${f.store.toUpperCase()}_WEBHOOK_SECRET is not set: the endpoint answers 404`);
    }
  });

  it('a feature that reads the store API needs its key and outbound HTTPS; the others only the secret', () => {
    const secretOnly = { stripeWebhookSecret: 'whsec_x', acceptTestEvents: false };
    expect(state(secretOnly, 'Subscriptions')).toMatchObject({ ready: true, outbound: null, needs: 'STRIPE_WEBHOOK_SECRET' });
    expect(state(secretOnly, 'One-time Checkout')).toMatchObject({
      ready: false,
      needs: 'STRIPE_WEBHOOK_SECRET and STRIPE_API_KEY',
      outbound: 'HTTPS to api.stripe.com',
      missing: expect.stringContaining('STORE_API_KEY_MISSING'),
    });
    const withKey = { ...secretOnly, stripeApiKey: 'rk_live_x' };
    expect(state(withKey, 'One-time Checkout')).toMatchObject({ ready: true, missing: null });
    expect(state(withKey, 'Refunds of a payment')).toMatchObject({ ready: true });
  });

  it('Paddle without PADDLE_API_KEY: purchases wait for the customer event; Lemon Squeezy needs no key', () => {
    const paddle = { paddleWebhookSecret: 'pdl_x', lemonsqueezyWebhookSecret: 'ls_x', acceptTestEvents: false };
    expect(state(paddle, 'The buyer')).toMatchObject({ ready: false, outbound: 'HTTPS to api.paddle.com' });
    expect(state(paddle, 'The buyer')?.missing).toContain('AWAITING_CUSTOMER');
    expect(state({ ...paddle, paddleApiKey: 'pdl_key' }, 'The buyer')).toMatchObject({ ready: true });
    expect(state(paddle, 'Every Lemon Squeezy')).toMatchObject({ ready: true, outbound: null });
  });
});
