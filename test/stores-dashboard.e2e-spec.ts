import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../src/stores/stripe/stripe-store';
import { Agent, flashOf, loggedInAgent, postForm, unescape } from './dashboard-helpers';
import { createTestApp, TestApp } from './support/test-app';

const SECRET = 'whsec_stores_dashboard_0123456789';
const LS_SECRET = 'ls_stores_dashboard_secret';

/** The Stores page: plans, events with replay, secrets (docs/dashboard.md, Patterns for every page (issue 31)). */
describe('dashboard: stores page', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;
  const sdk = new Stripe('sk_test_unused');

  beforeAll(async () => {
    t = await createTestApp({ stores: { stripeWebhookSecret: SECRET, lemonsqueezyWebhookSecret: LS_SECRET, acceptTestEvents: false } });
    const session = await loggedInAgent(t);
    agent = session.agent;
    token = await session.token('/stores');
  }, 60_000);
  afterAll(() => t.close());

  const flash = (url: string) => flashOf(agent, url);
  const plans = () =>
    t.sql<{ id: number; price_id: string; on_end: string; limits: object; features: string[] | null }>(
      'SELECT * FROM store_plans ORDER BY id',
    );
  const sendPurchase = async (price: string, sub: string) => {
    const now = Math.floor(Date.now() / 1000);
    const invoice = {
      id: `in_${sub}`,
      object: 'invoice',
      billing_reason: 'subscription_create',
      customer: 'cus_d',
      customer_email: 'dash@example.com',
      customer_name: 'Dash Buyer',
      parent: { type: 'subscription_details', subscription_details: { subscription: sub } },
      lines: {
        object: 'list',
        data: [{ id: `il_${sub}`, quantity: 1, period: { start: now, end: now + 86_400 }, pricing: { price_details: { price } } }],
      },
    } satisfies Partial<Record<keyof Stripe.Invoice, unknown>>;
    const body = JSON.stringify({
      id: `evt_${sub}`,
      object: 'event',
      api_version: STRIPE_API_VERSION,
      created: now,
      livemode: true,
      type: 'invoice.paid',
      data: { object: invoice },
    });
    return t
      .http()
      .post('/api/v1/stores/stripe/events')
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', sdk.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }))
      .send(body)
      .expect(200);
  };

  it('is in the navigation and says which secrets are set', async () => {
    const res = await agent.get('/stores').expect(200);
    expect(res.text).toContain('<a href="/stores" aria-current="page">Stores</a>');
    const secrets = [
      ...res.text.matchAll(/data-testid="secret-row">\s*<td[^>]*>([A-Z_]+)<\/td>\s*<td[^>]*><span class="badge[^"]*">([^<]+)</g),
    ].map((m) => [m[1], m[2]]);
    expect(secrets).toEqual([
      ['STRIPE_WEBHOOK_SECRET', 'set'],
      ['STRIPE_API_KEY', 'not set'],
      ['PADDLE_WEBHOOK_SECRET', 'not set'],
      ['PADDLE_API_KEY', 'not set'],
      ['LEMONSQUEEZY_WEBHOOK_SECRET', 'set'],
    ]);
    expect(res.text).not.toContain(SECRET);
    expect(res.text).not.toContain(LS_SECRET);
    for (const store of ['stripe', 'paddle', 'lemonsqueezy']) expect(res.text).toContain(`/api/v1/stores/${store}/events`);
  });

  it("shows each store's events with the store's name", async () => {
    const body = JSON.stringify({
      meta: { event_name: 'license_key_created', test_mode: false },
      data: { type: 'license-keys', id: '7', attributes: { created_at: new Date().toISOString() } },
    });
    await t
      .http()
      .post('/api/v1/stores/lemonsqueezy/events')
      .set('Content-Type', 'application/json')
      .set('X-Signature', createHmac('sha256', LS_SECRET).update(body).digest('hex'))
      .send(body)
      .expect(200);
    const page = await agent.get('/stores').expect(200);
    const row = /data-testid="event-row">[\s\S]*?<\/tr>/.exec(page.text)?.[0] ?? '';
    expect(row).toContain('data-testid="event-store">lemonsqueezy<');
    expect(row).toContain('license_key_created');
  });

  it('creates a plan with the admin API’s validation: errors beside their fields, the typed input kept', async () => {
    const bad = await postForm(agent, token, '/stores/plans', {
      store: 'stripe',
      price_id: '',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      on_end: 'expire',
      max_installations: 'many',
    }).expect(400);
    const html = unescape(bad.text);
    expect(html).toContain('The plan was not created: correct these fields');
    expect(html).toMatch(/href="#field-price_id"/);
    expect(html).toMatch(/href="#field-limits"/);
    expect(html).toContain('value="many"');
    expect(await plans()).toEqual([]);

    const res = await postForm(agent, token, '/stores/plans', {
      store: 'stripe',
      price_id: 'price_dash',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      max_installations: '3',
      features: ['REPORTS', 'INVENTORY'],
      grace_days: '5',
      on_end: 'suspend',
    }).expect(303);
    expect(res.headers.location).toBe('/stores');
    expect((await flash('/stores'))?.[1]).toContain('Plan created: stripe price price_dash now sells POS_RETAIL MONTHLY licences.');
    expect(await plans()).toMatchObject([
      { price_id: 'price_dash', on_end: 'suspend', limits: { max_installations: 3 }, features: ['REPORTS', 'INVENTORY'] },
    ]);

    const duplicate = await postForm(agent, token, '/stores/plans', {
      store: 'stripe',
      price_id: 'price_dash',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      on_end: 'expire',
    }).expect(409);
    expect(unescape(duplicate.text)).toContain('The store has a plan for this price already');
  });

  it('a plan feature the product does not offer is refused on its field', async () => {
    const res = await postForm(agent, token, '/stores/plans', {
      store: 'stripe',
      price_id: 'price_erp_feature',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      on_end: 'expire',
      features: ['PAYROLL'],
    }).expect(400);
    expect(unescape(res.text)).toMatch(/href="#field-features"[^>]*>[^<]*not offered by POS_RETAIL/);
  });

  it('edits and deletes a plan after a confirmation page', async () => {
    const [plan] = await plans();
    const edit = await agent.get(`/stores/plans/${plan.id}/edit`).expect(200);
    expect(unescape(edit.text)).toContain('value="price_dash"');
    await postForm(agent, token, `/stores/plans/${plan.id}`, {
      store: 'stripe',
      price_id: 'price_dash',
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      on_end: 'revoke',
      grace_days: '5',
    }).expect(303);
    const [edited] = await plans();
    expect(edited).toMatchObject({ on_end: 'revoke', features: null });
    expect(edited.limits).toEqual({});
    const confirm = await agent.get(`/stores/plans/${plan.id}/delete`).expect(200);
    expect(confirm.text).toContain('leaves its licences as they are');
    await postForm(agent, token, `/stores/plans/${plan.id}/delete`).expect(303);
    expect(await plans()).toEqual([]);
    await agent.get(`/stores/plans/${plan.id}/edit`).expect(404);
  });

  it('lists recent events with status and error; replay processes an ignored one once its plan exists; a store-made licence links here', async () => {
    const ignored = (await sendPurchase('price_later', 'sub_dash_1')).body as { id: string; status: string };
    expect(ignored.status).toBe('ignored');
    let page = await agent.get('/stores').expect(200);
    expect(page.text).toContain('no plan for the price price_later');
    expect(page.text).toContain(`action="/stores/events/${ignored.id}/replay"`);

    await t.admin
      .post('/api/v1/admin/store-plans')
      .send({ store: 'stripe', price_id: 'price_later', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
      .expect(201);
    await postForm(agent, token, `/stores/events/${ignored.id}/replay`).expect(303);
    expect(await flash('/stores')).toEqual(['success', `Event evt_sub_dash_1 replayed: processed.`]);
    page = await agent.get('/stores').expect(200);
    expect(page.text).not.toContain(`action="/stores/events/${ignored.id}/replay"`);

    const [licence] = await t.sql<{ id: number }>(`SELECT id FROM licenses WHERE store_subscription_id = 'sub_dash_1'`);
    const show = await agent.get(`/licenses/${licence.id}`).expect(200);
    expect(show.text).toContain(`<a href="/stores?license_id=${licence.id}">Made by stripe</a>`);
    const filtered = await agent.get(`/stores?license_id=${licence.id}`).expect(200);
    expect(filtered.text.match(/data-testid="event-row"/g)).toHaveLength(1);

    // A processed event replayed again: refused with a message, nothing changes.
    await postForm(agent, token, `/stores/events/${ignored.id}/replay`).expect(303);
    expect((await flash('/stores'))?.[0]).toBe('error');
  });

  it('refuses a form post without the CSRF token (an attacker page cannot create plans)', async () => {
    await agent
      .post('/stores/plans')
      .type('form')
      .send({ store: 'stripe', price_id: 'price_csrf', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
      .expect(403);
    expect((await plans()).map((p) => p.price_id)).not.toContain('price_csrf');
  });
});
