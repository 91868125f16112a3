import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../src/stores/stripe/stripe-store';
import { createTestApp, TestApp } from './support/test-app';

/**
 * A Stripe-Signature header with more than one t=, or a t= that is not plain digits, is 400 INVALID_SIGNATURE
 * (docs/stores.md, Signatures): the attacker signs with a future timestamp and hides it behind a second t=.
 */
const SECRET = 'whsec_signature_header_0123456789abcdef';
const EVENTS = '/api/v1/stores/stripe/events';
const now = () => Math.floor(Date.now() / 1000);
const DAY = 86_400;

/** v1 over `${t}.${body}` exactly as Stripe signs: the attacker knows the secret here, to show the header alone decides. */
const v1 = (t: string, body: string) => createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');

describe('Stripe-Signature t= rules (e2e)', () => {
  let t: TestApp;
  const event = {
    id: 'evt_sig_header',
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created: now(),
    livemode: true,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'customer.created',
    data: { object: { id: 'cus_sig_header', object: 'customer' } },
  };
  const body = JSON.stringify(event);

  beforeAll(async () => {
    t = await createTestApp({ stores: { stripeWebhookSecret: SECRET, acceptTestEvents: false } });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  const send = (signature: string) =>
    t.http().post(EVENTS).set('Content-Type', 'application/json').set('Stripe-Signature', signature).send(body);
  const stored = async () => (await t.sql<{ n: string }>('SELECT count(*) AS n FROM store_events'))[0].n;

  it('two t= (a year ahead hidden behind a current one, signed with the future one): 400 INVALID_SIGNATURE, nothing stored', async () => {
    const future = String(now() + 365 * DAY);
    const current = String(now());
    for (const header of [`t=${current},t=${future},v1=${v1(future, body)}`, `t=${future},t=${current},v1=${v1(future, body)}`]) {
      const res = await send(header).expect(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_SIGNATURE', message: expect.stringMatching(/more than one t=/) });
    }
    expect(await stored()).toBe('0');
  });

  it.each([
    ['t=+N', (n: number) => `+${n}`],
    ['t=N.0', (n: number) => `${n}.0`],
    ['t=Nx', (n: number) => `${n}x`],
    ['t= (empty)', () => ''],
  ])('%s, even correctly signed over that text: 400 INVALID_SIGNATURE, nothing stored', async (_name, form) => {
    // Dated a year ahead: the future-timestamp check must not be the one that refuses it.
    const text = form(now() + 365 * DAY);
    const res = await send(`t=${text},v1=${v1(text, body)}`).expect(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_SIGNATURE', message: expect.stringMatching(/t=/) });
    expect(await stored()).toBe('0');
  });

  it('a plain-digit t= signed correctly is still accepted (200)', async () => {
    const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
    await send(header).expect(200);
    expect(await stored()).toBe('1');
  });
});
