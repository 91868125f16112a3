import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { signedAnswer, storeEventCount } from './support/stores';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Every store's webhook refuses what it cannot verify, and stores nothing (docs/stores.md, Signatures): the same
 * behaviour checked for each store with its own signing. The store files (test/stores*.e2e-spec.ts) test what happens
 * after a signature holds.
 */
const sdk = new Stripe('sk_test_unused');
const seconds = () => Math.floor(Date.now() / 1000);

interface StoreCase {
  store: string;
  path: string;
  header: string;
  secret: string;
  /** The config field that holds the secret (unset: the endpoint does not exist). */
  secretField: 'stripeWebhookSecret' | 'paddleWebhookSecret' | 'lemonsqueezyWebhookSecret';
  /** The store's own signature of `body` with `secret`, dated `at` (seconds) where the store dates signatures. */
  sign: (body: string, secret: string, at?: number) => string;
  /** An event as the store sends it, and the same body with one price changed (after signing). */
  body: string;
  tampered: (body: string) => string;
  /** Header values that are no signature of this store's format. */
  malformed: (body: string, secret: string) => string[];
  /** JSON this store's verified body must not be: well-formed, but not one of its events. */
  notEvent: string;
}

const STORES: StoreCase[] = [
  {
    store: 'Stripe',
    path: '/api/v1/stores/stripe/events',
    header: 'Stripe-Signature',
    secret: 'whsec_signatures_e2e_0123456789abcdef',
    secretField: 'stripeWebhookSecret',
    sign: (payload, secret, timestamp = seconds()) => sdk.webhooks.generateTestHeaderString({ payload, secret, timestamp }),
    body: JSON.stringify({
      id: 'evt_sig',
      object: 'event',
      type: 'invoice.paid',
      created: seconds(),
      livemode: true,
      data: { object: { id: 'in_sig', object: 'invoice', subscription: 'sub_sig', lines: { data: [{ price: { id: 'price_monthly' } }] } } },
    }),
    tampered: (body) => body.replace('price_monthly', 'price_pro'),
    malformed: () => ['garbage,,v1='],
    notEvent: JSON.stringify({ hello: 'world', data: 1 }),
  },
  {
    store: 'Paddle',
    path: '/api/v1/stores/paddle/events',
    header: 'Paddle-Signature',
    secret: 'pdl_ntfset_signatures_e2e_0123456789',
    secretField: 'paddleWebhookSecret',
    sign: (body, secret, ts = seconds()) => `ts=${ts};h1=${createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex')}`,
    body: JSON.stringify({
      event_id: 'evt_sig',
      event_type: 'transaction.completed',
      occurred_at: new Date().toISOString(),
      notification_id: 'ntf_sig',
      data: {
        id: 'txn_sig',
        status: 'completed',
        customer_id: 'ctm_sig',
        subscription_id: 'sub_sig',
        items: [{ price_id: 'pri_monthly' }],
      },
    }),
    tampered: (body) => body.replace('pri_monthly', 'pri_pro'),
    // No ts, no h1, a ts that is no number, neither.
    malformed: () => ['h1=abc', `ts=${seconds()}`, 'ts=yesterday;h1=00', 'garbage'],
    notEvent: JSON.stringify({ event_id: 'evt_1', data: 'x' }),
  },
  {
    store: 'Lemon Squeezy',
    path: '/api/v1/stores/lemonsqueezy/events',
    header: 'X-Signature',
    secret: 'ls_signatures_e2e_signing_secret',
    secretField: 'lemonsqueezyWebhookSecret',
    sign: (body, secret) => createHmac('sha256', secret).update(body).digest('hex'),
    body: JSON.stringify({
      meta: { event_name: 'subscription_created', test_mode: false, webhook_id: 'wh_1' },
      data: { type: 'subscriptions', id: '1', attributes: { order_id: 2, variant_id: 101, status: 'active' } },
    }),
    tampered: (body) => body.replace('"variant_id":101', '"variant_id":102'),
    // Not hex; too short.
    malformed: (body, secret) => ['zz', createHmac('sha256', secret).update(body).digest('hex').slice(0, 20)],
    notEvent: JSON.stringify({ meta: {}, data: [] }),
  },
];

describe('stores: signatures (nothing stored unless verified; docs/stores.md)', () => {
  let t: TestApp;

  beforeAll(async () => {
    const secrets = Object.fromEntries(STORES.map((s) => [s.secretField, s.secret]));
    t = await createTestApp({ stores: { ...secrets, acceptTestEvents: false } });
  }, 60_000);
  afterAll(() => t?.close());

  let before: number;
  beforeEach(async () => {
    before = await storeEventCount(t);
  });
  afterEach(async () => expect(await storeEventCount(t)).toBe(before));

  describe.each(STORES)('$store', (s) => {
    const answer = (signature: string | undefined, raw = s.body) => signedAnswer(t, s.path, s.header, signature, raw);

    it(`a missing ${s.header}: 400 INVALID_SIGNATURE`, async () => {
      expect(await answer(undefined)).toEqual([400, 'INVALID_SIGNATURE']);
    });
    it(`a malformed ${s.header}: 400 INVALID_SIGNATURE`, async () => {
      for (const signature of s.malformed(s.body, s.secret))
        expect([signature, ...(await answer(signature))]).toEqual([signature, 400, 'INVALID_SIGNATURE']);
    });
    it('a wrong signature (the body changed after signing): 400', async () => {
      expect(s.tampered(s.body)).not.toBe(s.body);
      expect(await answer(s.sign(s.tampered(s.body), s.secret))).toEqual([400, 'INVALID_SIGNATURE']);
    });
    it('a signature made with another secret: 400', async () => {
      expect(await answer(s.sign(s.body, `${s.secret}_attacker`))).toEqual([400, 'INVALID_SIGNATURE']);
    });
    it('a valid signature over a body that is not JSON: 400 VALIDATION_ERROR', async () => {
      const raw = 'this is not json {';
      expect(await answer(s.sign(raw, s.secret), raw)).toEqual([400, 'VALIDATION_ERROR']);
    });
    it('a valid signature over JSON that is not an event: 400 VALIDATION_ERROR', async () => {
      expect(await answer(s.sign(s.notEvent, s.secret), s.notEvent)).toEqual([400, 'VALIDATION_ERROR']);
    });
    it('1 MiB + 1 byte: 413 PAYLOAD_TOO_LARGE, before any signature check', async () => {
      const raw = 'x'.repeat(1024 * 1024 + 1);
      expect(await answer(s.sign(raw, s.secret), raw)).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    });
    it('no secret set: 404 (the endpoint does not exist for this server)', async () => {
      const stores = t.config.stores as Record<StoreCase['secretField'], string | undefined>;
      stores[s.secretField] = undefined;
      try {
        expect((await answer(s.sign(s.body, s.secret)))[0]).toBe(404);
      } finally {
        stores[s.secretField] = s.secret;
      }
    });
  });

  // Lemon Squeezy signs the body alone; Stripe and Paddle date their signatures and allow 300 s either way.
  describe.each(STORES.filter((s) => s.store !== 'Lemon Squeezy'))('$store: the signature timestamp', (s) => {
    it('a timestamp 6 minutes old, or 6 minutes ahead: 400 (the window is 300 s)', async () => {
      for (const at of [seconds() - 360, seconds() + 360]) {
        expect([at, ...(await signedAnswer(t, s.path, s.header, s.sign(s.body, s.secret, at), s.body))]).toEqual([
          at,
          400,
          'INVALID_SIGNATURE',
        ]);
      }
    });
  });
});
