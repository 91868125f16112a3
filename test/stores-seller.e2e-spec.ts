import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../src/stores/stripe/stripe-store';
import { loggedInAgent, type Agent } from './dashboard-helpers';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

/**
 * What needs a seller's attention (docs/stores.md, Needs attention): failed events, and ignored ones for a price without
 * a plan (NO_PLAN) until staff replay them. The ledger's states are written directly, so the filter is tested over every
 * combination of status, reason code and replay; the replay itself goes through the admin API.
 */
jest.setTimeout(60_000);

type Row = { status: string; reason_code: string | null; replayed?: boolean; store?: string };
type EventBody = { id: string; event_id: string; status: string; reason_code: string | null };

const DAY = 86_400;

/** invoice.paid for a new subscription of `price` at the pinned API version (a price without a plan in these tests). */
function invoicePaid(eventId: string, price: string): Record<string, unknown> {
  const start = Math.floor(Date.now() / 1000);
  const subscription = `sub_${eventId}`;
  return {
    id: eventId,
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created: start,
    livemode: true,
    type: 'invoice.paid',
    data: {
      object: {
        id: `in_${eventId}`,
        object: 'invoice',
        billing_reason: 'subscription_create',
        customer: 'cus_attention',
        customer_email: 'attention@shop.example',
        customer_name: 'Attention Buyer',
        parent: { type: 'subscription_details', subscription_details: { subscription } },
        lines: {
          object: 'list',
          data: [{ id: `il_${eventId}`, quantity: 1, period: { start, end: start + 30 * DAY }, pricing: { price_details: { price } } }],
        },
      },
    },
  };
}

describe('store events needing attention (docs/stores.md, Needs attention)', () => {
  let t: TestApp;
  let seq = 0;
  /** Ids of the rows this file wrote, by what the filter must decide for them. */
  const attention: string[] = [];
  const quiet: string[] = [];

  async function ledgerRow(row: Row): Promise<string> {
    seq += 1;
    const eventId = `evt_attention_${seq}`;
    const [{ id }] = await t.sql<{ id: string }>(
      `INSERT INTO store_events (store, event_id, type, status, reason_code, replayed_at, error, payload)
       VALUES ($1, $2, 'invoice.paid', $3, $4, $5, 'why', $6) RETURNING id::text AS id`,
      [
        row.store ?? 'stripe',
        eventId,
        row.status,
        row.reason_code,
        row.replayed ? new Date() : null,
        JSON.stringify(invoicePaid(eventId, `price_none_${seq}`)),
      ],
    );
    return id;
  }

  const list = (query: string) => t.admin.get(`/api/v1/admin/store-events?${query}`);
  const ids = (body: EventBody[]) => body.map((e) => e.id).sort();

  beforeAll(async () => {
    t = await createTestApp({ stores: { stripeWebhookSecret: 'whsec_attention_0123456789', acceptTestEvents: false } });
    attention.push(
      await ledgerRow({ status: 'failed', reason_code: 'STORE_API_KEY_MISSING' }),
      await ledgerRow({ status: 'failed', reason_code: 'API_VERSION_MISMATCH', replayed: true }),
      await ledgerRow({ status: 'failed', reason_code: 'INVALID_QUANTITY', store: 'paddle' }),
      await ledgerRow({ status: 'ignored', reason_code: 'NO_PLAN' }),
      await ledgerRow({ status: 'ignored', reason_code: 'NO_PLAN', store: 'lemonsqueezy' }),
    );
    quiet.push(
      await ledgerRow({ status: 'processed', reason_code: null }),
      await ledgerRow({ status: 'ignored', reason_code: 'NO_PLAN', replayed: true }),
      await ledgerRow({ status: 'ignored', reason_code: 'UNHANDLED_TYPE' }),
      await ledgerRow({ status: 'ignored', reason_code: 'TEST_MODE' }),
      await ledgerRow({ status: 'ignored', reason_code: 'OUT_OF_ORDER' }),
      await ledgerRow({ status: 'pending', reason_code: 'AWAITING_CUSTOMER', store: 'paddle' }),
      await ledgerRow({ status: 'pending', reason_code: 'UNKNOWN_SUBSCRIPTION' }),
    );
  }, 60_000);
  afterAll(() => t.close());

  it('needs_attention=true: failed events (replayed or not) and NO_PLAN ones not replayed; the total counts them', async () => {
    const res = await list('needs_attention=true').expect(200);
    expect(ids(res.body as EventBody[])).toEqual([...attention].sort());
    expect(res.headers['x-total-count']).toBe(String(attention.length));
    // reason_code is part of every event the API shows (the conformance check holds it to the OpenAPI schema).
    expect((res.body as EventBody[]).map((e) => e.reason_code).sort()).toEqual(
      ['API_VERSION_MISMATCH', 'INVALID_QUANTITY', 'NO_PLAN', 'NO_PLAN', 'STORE_API_KEY_MISSING'].sort(),
    );
  });

  it('needs_attention=false: every other event; no filter: both', async () => {
    expect(ids((await list('needs_attention=false').expect(200)).body as EventBody[])).toEqual([...quiet].sort());
    expect(ids((await list('limit=1000').expect(200)).body as EventBody[])).toEqual([...attention, ...quiet].sort());
  });

  it('combines with the other filters and pages', async () => {
    const stripe = (await list('needs_attention=true&store=stripe').expect(200)).body as EventBody[];
    expect(stripe.map((e) => e.reason_code).sort()).toEqual(['API_VERSION_MISMATCH', 'NO_PLAN', 'STORE_API_KEY_MISSING']);
    const failed = await list('needs_attention=true&status=ignored').expect(200);
    expect((failed.body as EventBody[]).every((e) => e.reason_code === 'NO_PLAN')).toBe(true);
    const page = await list('needs_attention=true&limit=2&offset=1').expect(200);
    expect(page.body).toHaveLength(2);
    expect(page.headers['x-total-count']).toBe(String(attention.length));
  });

  it('a replay of a NO_PLAN event that still finds no plan takes it off the list (the seller looked at it)', async () => {
    const id = await ledgerRow({ status: 'ignored', reason_code: 'NO_PLAN' });
    expect(ids((await list('needs_attention=true').expect(200)).body as EventBody[])).toContain(id);
    const replayed = await t.admin.post(`/api/v1/admin/store-events/${id}/replay`).expect(200);
    expect(replayed.body).toMatchObject({ id, status: 'ignored' });
    expect(ids((await list('needs_attention=true').expect(200)).body as EventBody[])).not.toContain(id);
    const [row] = await t.sql<{ replayed: boolean }>('SELECT replayed_at IS NOT NULL AS replayed FROM store_events WHERE id = $1', [id]);
    expect(row.replayed).toBe(true);
  });

  it('a NO_PLAN event whose plan was added meanwhile: the replay processes it and it leaves the list', async () => {
    const id = await ledgerRow({ status: 'ignored', reason_code: 'NO_PLAN' });
    const [{ price }] = await t.sql<{ price: string }>(
      `SELECT payload->'data'->'object'->'lines'->'data'->0->'pricing'->'price_details'->>'price' AS price FROM store_events WHERE id = $1`,
      [id],
    );
    await t.admin
      .post('/api/v1/admin/store-plans')
      .send({ store: 'stripe', price_id: price, product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
      .expect(201);
    const replayed = await t.admin.post(`/api/v1/admin/store-events/${id}/replay`).expect(200);
    expect(replayed.body).toMatchObject({ id, status: 'processed', action: 'purchase' });
    expect(ids((await list('needs_attention=true').expect(200)).body as EventBody[])).not.toContain(id);
  });

  it('end to end: signed Stripe events for a price without a plan, and a Checkout sale without STRIPE_API_KEY, are listed', async () => {
    const sdk = new Stripe('sk_test_unused');
    const send = (event: Record<string, unknown>) => {
      const body = JSON.stringify(event);
      return t
        .http()
        .post('/api/v1/stores/stripe/events')
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', sdk.webhooks.generateTestHeaderString({ payload: body, secret: 'whsec_attention_0123456789' }))
        .send(body);
    };
    // The repository's real-shaped fixture, its price without a plan here.
    const fixture = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'stores', 'stripe', 'invoice.paid.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const noPlan = (await send({ ...fixture, id: 'evt_attention_e2e_noplan', created: Math.floor(Date.now() / 1000) }).expect(200))
      .body as EventBody;
    expect(noPlan).toMatchObject({ status: 'ignored', reason_code: 'NO_PLAN' });
    const checkout = {
      id: 'cs_attention_e2e',
      object: 'checkout.session',
      mode: 'payment',
      payment_status: 'paid',
      status: 'complete',
      customer_details: { email: 'once@shop.example', name: 'Once' },
      payment_intent: 'pi_attention_e2e',
      livemode: true,
    };
    const failed = await send({
      id: 'evt_attention_e2e_checkout',
      object: 'event',
      api_version: STRIPE_API_VERSION,
      created: Math.floor(Date.now() / 1000),
      livemode: true,
      type: 'checkout.session.completed',
      data: { object: checkout },
    }).expect(500);
    expect(failed.body.error.details).toMatchObject({ reason_code: 'STORE_API_KEY_MISSING' });
    const listed = (await list('needs_attention=true&limit=1000').expect(200)).body as EventBody[];
    expect(listed.map((e) => e.event_id)).toEqual(expect.arrayContaining(['evt_attention_e2e_noplan', 'evt_attention_e2e_checkout']));
    attention.push(...listed.filter((e) => e.event_id.startsWith('evt_attention_e2e')).map((e) => e.id));
  });

  it.each([['yes'], ['1'], ['TRUE'], [''], ['true&needs_attention=false'], ['null']])(
    'needs_attention=%s: 400 VALIDATION_ERROR naming the field',
    async (value) => {
      const res = await list(`needs_attention=${value}`).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(res.body)).toEqual(['needs_attention']);
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts|stack/i);
    },
  );

  it('attacker: a token limited to products cannot list events needing attention (stores:manage is for every product)', async () => {
    const limited = await t.admin
      .post('/api/v1/admin/tokens')
      .send({ name: 'attention-limited', scopes: ['licenses:read', 'licenses:write'], products: ['POS_RETAIL'] })
      .expect(201);
    const res = await t
      .http()
      .get('/api/v1/admin/store-events?needs_attention=true')
      .set('Authorization', `Bearer ${limited.body.token}`)
      .expect(403);
    expect(JSON.stringify(res.body)).not.toContain('evt_attention');
    // Nor can it see them through a replay (which names the event) or the count's page.
    await t
      .http()
      .post(`/api/v1/admin/store-events/${attention[0]}/replay`)
      .set('Authorization', `Bearer ${limited.body.token}`)
      .expect(403);
    const global = await t.admin
      .post('/api/v1/admin/tokens')
      .send({ name: 'attention-global', scopes: ['stores:manage'] })
      .expect(201);
    const seen = await t
      .http()
      .get('/api/v1/admin/store-events?needs_attention=true')
      .set('Authorization', `Bearer ${global.body.token}`)
      .expect(200);
    expect(ids(seen.body as EventBody[])).toEqual([...attention].sort());
  });

  describe('plans: on_end is needed only where a subscription can end (docs/stores.md, Plans)', () => {
    const plan = (body: Record<string, unknown>) =>
      t.admin.post('/api/v1/admin/store-plans').send({ store: 'stripe', product_code: 'FISCAL_BRIDGE', ...body });

    it('a PERPETUAL plan without on_end: 201, stored with expire', async () => {
      const res = await plan({ price_id: 'price_perpetual_no_end', license_type: 'PERPETUAL' }).expect(201);
      expect(res.body).toMatchObject({ license_type: 'PERPETUAL', on_end: 'expire' });
      const revoke = await plan({ price_id: 'price_perpetual_revoke', license_type: 'PERPETUAL', on_end: 'revoke' }).expect(201);
      expect(revoke.body.on_end).toBe('revoke');
    });

    it.each([['MONTHLY'], ['YEARLY'], ['QUARTERLY'], ['TRIAL']])('a %s plan without on_end: 400 naming on_end', async (type) => {
      const res = await plan({ price_id: `price_${type}_no_end`, license_type: type }).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(res.body)).toEqual(['on_end']);
    });

    it('a PERPETUAL plan with a wrong on_end, or null: 400 naming on_end', async () => {
      for (const onEnd of ['never', null, 1]) {
        const res = await plan({ price_id: 'price_perpetual_bad', license_type: 'PERPETUAL', on_end: onEnd }).expect(400);
        expect(fieldsOf(res.body)).toEqual(['on_end']);
      }
    });

    it('an update may leave on_end out, whatever the type', async () => {
      const created = await plan({ price_id: 'price_update_no_end', license_type: 'PERPETUAL' }).expect(201);
      const res = await t.admin.put(`/api/v1/admin/store-plans/${created.body.id}`).send({ license_type: 'YEARLY' }).expect(200);
      expect(res.body).toMatchObject({ license_type: 'YEARLY', on_end: 'expire' });
    });
  });

  describe('dashboard (docs/dashboard.md, Pages)', () => {
    let agent: Agent;
    beforeAll(async () => {
      agent = (await loggedInAgent(t)).agent;
    }, 60_000);

    const countOn = (html: string) => /data-testid="store-attention"[\s\S]*?data-testid="attention-count">(\d+)</.exec(html)?.[1];
    const attentionTotal = async () => (await list('needs_attention=true').expect(200)).headers['x-total-count'];

    it('the overview shows the count, linking to the filtered Stores page', async () => {
      const html = (await agent.get('/dashboard').expect(200)).text;
      expect(countOn(html)).toBe(await attentionTotal());
      expect(html).toContain('<a href="/stores?needs_attention=true#events-heading">store events need attention</a>');
    });

    it('the Stores page shows the count and, filtered, only the events needing attention with their reason codes', async () => {
      const all = (await agent.get('/stores').expect(200)).text;
      expect(countOn(all)).toBe(await attentionTotal());
      expect(all).toContain('href="/stores?needs_attention=true#events-heading"');
      const filtered = (await agent.get('/stores?needs_attention=true').expect(200)).text;
      expect(filtered).toContain('Events needing attention');
      const rows = [...filtered.matchAll(/data-testid="event-row">[\s\S]*?<\/tr>/g)].map((m) => m[0]);
      expect(String(rows.length)).toBe(await attentionTotal());
      expect(rows.every((r) => /event-status">failed<|event-reason">NO_PLAN</.test(r))).toBe(true);
      expect(rows.some((r) => r.includes('data-testid="event-reason">STORE_API_KEY_MISSING<'))).toBe(true);
      // Anything else than true shows every event (a dashboard filter that is not valid is dropped, not an error).
      const other = (await agent.get('/stores?needs_attention=yes').expect(200)).text;
      expect(other).toContain('Recent events');
    });

    it('says which store features need an API key and outbound access, and whether each is configured', async () => {
      const html = (await agent.get('/stores').expect(200)).text.replace(/&#x27;|’/g, "'");
      const rows = [...html.matchAll(/data-testid="feature-row">([\s\S]*?)<\/tr>/g)].map((m) => m[1]);
      const row = (text: string) => rows.find((r) => r.includes(text)) ?? '';
      // Subscriptions need only the secret (set here); one-time Checkout payments also STRIPE_API_KEY and api.stripe.com.
      expect(row('Subscriptions')).toContain('feature-state">configured<');
      expect(row('Subscriptions')).toMatch(/Outbound access">\s*<span class="muted">none</);
      expect(row('One-time Checkout')).toContain('STRIPE_WEBHOOK_SECRET and STRIPE_API_KEY');
      expect(row('One-time Checkout')).toContain('HTTPS to api.stripe.com');
      expect(row('One-time Checkout')).toContain('feature-state">not configured<');
      expect(row('One-time Checkout')).toContain('STRIPE_API_KEY is not set');
      expect(row("buyer's e-mail")).toContain('PADDLE_WEBHOOK_SECRET and PADDLE_API_KEY');
      expect(row("buyer's e-mail")).toContain('HTTPS to api.paddle.com');
      expect(row("buyer's e-mail")).toContain('PADDLE_WEBHOOK_SECRET is not set');
      expect(row('Every Lemon Squeezy action')).toContain('not configured');
      expect(html).not.toContain('whsec_attention_0123456789');
    });
  });
});
