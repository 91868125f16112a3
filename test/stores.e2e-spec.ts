import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { NEEDS_ATTENTION } from '../src/stores/store-event.entity';
import { STRIPE_API_VERSION, STRIPE_PREVIOUS_API_VERSION } from '../src/stores/stripe/stripe-store';
import { EventFanoutService } from '../src/events/event-fanout.service';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Licences from Stripe purchases (docs/stores.md): signatures over the raw body, the action table, the ledger,
 * out-of-order events, and the hostile deliveries of issue 32. Payloads are typed by the SDK's own types.
 */
type DeepPartial<T> = T extends (infer U)[] ? DeepPartial<U>[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

const SECRET = 'whsec_stores_e2e_0123456789abcdef';
const EVENTS = '/api/v1/stores/stripe/events';
const sdk = new Stripe('sk_test_unused');
const now = () => Math.floor(Date.now() / 1000);
const DAY = 86_400;

let seq = 0;
const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}`;

function stripeEvent(
  type: string,
  object: object,
  created = now(),
  extra: DeepPartial<Stripe.Event> = {},
  previousAttributes?: object,
): Stripe.Event {
  const event: DeepPartial<Stripe.Event> = {
    id: uid('evt'),
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created,
    livemode: true,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    ...extra,
  };
  const data = previousAttributes ? { object, previous_attributes: previousAttributes } : { object };
  return { ...event, type, data } as unknown as Stripe.Event;
}

interface InvoiceInput {
  subscription: string;
  reason: Stripe.Invoice.BillingReason;
  price: string;
  quantity?: number;
  start: number;
  end: number;
  paymentIntent?: string;
  email?: string;
}

/** An invoice at the pinned version's paths: the subscription under parent, each line's price under pricing. */
function invoice(i: InvoiceInput): DeepPartial<Stripe.Invoice> {
  return {
    id: uid('in'),
    object: 'invoice',
    billing_reason: i.reason,
    customer: 'cus_buyer',
    customer_email: i.email ?? 'buyer@example.com',
    customer_name: 'Buyer d.o.o.',
    livemode: true,
    parent: { type: 'subscription_details', subscription_details: { subscription: i.subscription, metadata: {} } },
    lines: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: uid('il'),
          object: 'line_item',
          quantity: i.quantity ?? 1,
          period: { start: i.start, end: i.end },
          pricing: { type: 'price_details', price_details: { price: i.price, product: 'prod_x' }, unit_amount_decimal: '1000' },
          parent: {
            type: 'subscription_item_details',
            subscription_item_details: { subscription: i.subscription, subscription_item: 'si_1', proration: false },
          },
        },
      ],
    },
    payments: {
      object: 'list',
      has_more: false,
      data: [{ object: 'invoice_payment', payment: { type: 'payment_intent', payment_intent: i.paymentIntent ?? uid('pi') } }],
    },
  };
}

function subscription(id: string, price: string, quantity = 1, endedAt: number | null = null): DeepPartial<Stripe.Subscription> {
  return {
    id,
    object: 'subscription',
    customer: 'cus_buyer',
    ended_at: endedAt,
    items: {
      object: 'list',
      has_more: false,
      data: [{ id: 'si_1', object: 'subscription_item', quantity, price: { id: price, object: 'price' } }],
    },
  };
}

/** customer.subscription.updated as Stripe sends it for a change of price: the items' old values under previous_attributes. */
function planChange(sub: string, price: string, created: number, oldPrice = 'price_monthly', quantity = 1): Stripe.Event {
  const previous: { items: DeepPartial<Stripe.ApiList<Stripe.SubscriptionItem>> } = {
    items: {
      object: 'list',
      has_more: false,
      data: [{ id: 'si_1', object: 'subscription_item', quantity: 1, price: { id: oldPrice, object: 'price' } }],
    },
  };
  return stripeEvent('customer.subscription.updated', subscription(sub, price, quantity), created, {}, previous);
}

const charge = (paymentIntent: string, refunded = true): DeepPartial<Stripe.Charge> => ({
  id: uid('ch'),
  object: 'charge',
  refunded,
  payment_intent: paymentIntent,
});

describe('stores: Stripe (docs/stores.md)', () => {
  let t: TestApp;
  let standIn: Server;
  let lineItemCalls: string[] = [];
  /** The stand-in's invoice payments: which invoice each PaymentIntent paid. */
  const invoiceOfPayment = new Map<string, string>();
  let invoicePaymentCalls: string[] = [];
  /** Runs while the stand-in answers a line items call: what the database shows during the store's round trip. */
  let duringLineItems: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // A local stand-in for the Stripe API calls the server makes: a Checkout session's line items, and the invoice
    // payments of a PaymentIntent (how a refund finds an invoice whose event did not include its payments).
    standIn = createServer((req: IncomingMessage, res: ServerResponse) => {
      res.setHeader('Content-Type', 'application/json');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname === '/v1/invoice_payments') {
        invoicePaymentCalls.push(`${req.method} ${url.search} ${req.headers.authorization}`);
        const pi = url.searchParams.get('payment[payment_intent]') ?? '';
        if (pi.startsWith('pi_broken')) return res.writeHead(500).end(JSON.stringify({ error: { type: 'api_error', message: 'down' } }));
        const invoiceId = invoiceOfPayment.get(pi);
        const list: DeepPartial<Stripe.ApiList<Stripe.InvoicePayment>> = {
          object: 'list',
          has_more: false,
          url: '/v1/invoice_payments',
          data: invoiceId
            ? [{ id: uid('inpay'), object: 'invoice_payment', invoice: invoiceId, payment: { type: 'payment_intent', payment_intent: pi } }]
            : [],
        };
        return res.end(JSON.stringify(list));
      }
      lineItemCalls.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      const m = /^\/v1\/checkout\/sessions\/([^/]+)\/line_items/.exec(req.url ?? '');
      if (!m) return res.writeHead(404).end('{}');
      if (duringLineItems) void duringLineItems().then(() => answerLineItems(m[1], res));
      else answerLineItems(m[1], res);
    });
    const answerLineItems = (session: string, res: ServerResponse) => {
      if (session.startsWith('cs_broken')) return res.writeHead(500).end(JSON.stringify({ error: { type: 'api_error', message: 'down' } }));
      const list: DeepPartial<Stripe.ApiList<Stripe.LineItem>> = {
        object: 'list',
        has_more: false,
        url: `/v1/checkout/sessions/${session}/line_items`,
        data: [
          { id: 'li_none', object: 'item', quantity: 1, price: null },
          { id: 'li_1', object: 'item', quantity: 3, price: { id: 'price_onetime', object: 'price' } },
        ],
      };
      res.end(JSON.stringify(list));
    };
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    const port = (standIn.address() as AddressInfo).port;
    t = await createTestApp({
      stores: {
        stripeWebhookSecret: SECRET,
        stripeApiKey: 'sk_test_standin',
        stripeApiHost: { host: '127.0.0.1', port, protocol: 'http' },
        acceptTestEvents: false,
      },
    });
    // The outbox is counted: no fan-out may take events away meanwhile.
    await t.app.get(EventFanoutService).stop();
    await createPlan({
      price_id: 'price_monthly',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      limits: { max_installations: 2 },
      features: ['REPORTS'],
      policy: { heartbeat_timeout_seconds: 600 },
      grace_days: 3,
      on_end: 'expire',
    });
    await createPlan({
      price_id: 'price_pro',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      limits: { max_installations: 5 },
      on_end: 'suspend',
    });
    await createPlan({ price_id: 'price_erp', product_code: 'ERP_SUITE', license_type: 'MONTHLY', on_end: 'revoke' });
    await createPlan({ price_id: 'price_revoke', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'revoke' });
    await createPlan({ price_id: 'price_onetime', product_code: 'FISCAL_BRIDGE', license_type: 'PERPETUAL', on_end: 'expire' });
    await createPlan({ price_id: 'price_yearly', product_code: 'POS_RETAIL', license_type: 'YEARLY', on_end: 'expire' });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => standIn.close(resolve));
  });

  async function createPlan(body: Record<string, unknown>): Promise<{ id: number }> {
    const res = await t.admin.post('/api/v1/admin/store-plans').send({ store: 'stripe', ...body });
    if (res.status !== 201) throw new Error(`createPlan: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: number };
  }

  const sign = (payload: string, secret = SECRET, timestamp = now()) =>
    sdk.webhooks.generateTestHeaderString({ payload, secret, timestamp });
  const send = (event: Stripe.Event | string, signature?: string) => {
    const body = typeof event === 'string' ? event : JSON.stringify(event);
    return t
      .http()
      .post(EVENTS)
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', signature ?? sign(body))
      .send(body);
  };
  const storeEvents = () =>
    t.sql<{ event_id: string; status: string; error: string | null; license_id: number | null }>('SELECT * FROM store_events ORDER BY id');
  const licenseOf = async (subscriptionId: string) => {
    const [row] = await t.sql<{ id: number }>('SELECT id FROM licenses WHERE store_subscription_id = $1', [subscriptionId]);
    if (!row) return undefined;
    return (await t.admin.get(`/api/v1/admin/licenses/${row.id}`).expect(200)).body as Record<string, unknown> & {
      id: number;
      expires_at: string;
      limits: Record<string, number>;
      status: string;
    };
  };
  const auditCount = (licenseId: number) =>
    t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entries WHERE license_id = $1`, [licenseId]).then((r) => r[0].n);
  const outboxCount = (licenseId: number) =>
    t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM event_outbox WHERE license_id = $1`, [licenseId]).then((r) => r[0].n);

  async function purchase(sub: string, price = 'price_monthly', extra: Partial<InvoiceInput> = {}) {
    const start = now();
    const event = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_create', price, start, end: start + 30 * DAY, ...extra }),
    );
    const res = await send(event).expect(200);
    return { event, res, start, license: await licenseOf(sub) };
  }

  describe('signatures (nothing stored unless verified)', () => {
    let before: number;
    beforeEach(async () => {
      before = (await storeEvents()).length;
    });
    afterEach(async () => expect((await storeEvents()).length).toBe(before));

    // Missing, malformed, wrong and stale signatures, bodies that are no JSON or no event, 1 MiB + 1 byte and no secret:
    // test/stores-signatures.e2e-spec.ts, one table for every store.
    it('a valid signature over an event holding a NUL character (jsonb cannot store it): 400, not a 500', async () => {
      const raw = JSON.stringify(stripeEvent('customer.created', { id: 'cus_nul', object: 'customer', name: 'a\u0000b' }));
      expect(raw).toContain('\\u0000');
      expect((await send(raw, sign(raw)).expect(400)).body.error.code).toBe('VALIDATION_ERROR');
    });
    it('the JSON API keeps its 64 KiB limit beside the raw route', async () => {
      const res = await t.admin
        .post('/api/v1/admin/store-plans')
        .set('Content-Type', 'application/json')
        .send(`{"store":"stripe","price_id":"${'x'.repeat(70_000)}"}`);
      expect(res.status).toBe(413);
    });
  });

  it('a body just under 1 MiB with a valid signature is read and verified (the raw route takes more than 64 KiB)', async () => {
    const event = stripeEvent('customer.created', { id: 'cus_big', object: 'customer', description: 'y'.repeat(200_000) });
    const res = await send(event).expect(200);
    expect(res.body.status).toBe('ignored');
  });

  it('a signed event with absurd fields (a created time PostgreSQL cannot hold, a 300-character subscription id): no 5xx', async () => {
    const event = planChange('sub_' + 'x'.repeat(300), 'price_pro', 1e15);
    const res = await send(event);
    expect(res.status).toBe(200);
    expect(res.body.occurred_at).toBeNull();
  });

  it('end to end: purchase → renewal → plan change → end → refund of the first payment; every replay changes nothing', async () => {
    const sub = uid('sub');
    const firstPayment = uid('pi');
    const bought = await purchase(sub, 'price_monthly', { paymentIntent: firstPayment, quantity: 1 });
    expect(bought.res.body).toMatchObject({ status: 'processed', action: 'purchase' });
    const license = bought.license!;
    expect(license).toMatchObject({
      customer_email: 'buyer@example.com',
      customer_name: 'Buyer d.o.o.',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      limit_overrides: { max_installations: 2 },
      features: ['REPORTS'],
      grace_days: 3,
      store: { name: 'stripe', customer_id: 'cus_buyer', subscription_id: sub, order_id: (bought.event.data.object as Stripe.Invoice).id },
    });
    expect((license.policy as Record<string, number>).heartbeat_timeout_seconds).toBe(600);
    expect(license.expires_at).toBe(new Date((bought.start + 30 * DAY) * 1000).toISOString());
    const [audit] = await t.sql(`SELECT actor_type, actor FROM audit_entries WHERE license_id = $1 AND action = 'license.created'`, [
      license.id,
    ]);
    expect(audit).toEqual({ actor_type: 'store', actor: 'store:stripe' });

    const replays: Stripe.Event[] = [bought.event];
    const step = async (event: Stripe.Event) => {
      replays.push(event);
      return (await send(event).expect(200)).body as { status: string; action: string };
    };

    const renewedEnd = bought.start + 60 * DAY;
    const renewal = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_cycle', price: 'price_monthly', start: bought.start + 30 * DAY, end: renewedEnd }),
      now() + 1,
    );
    expect(await step(renewal)).toMatchObject({ status: 'processed', action: 'renewal' });
    expect((await licenseOf(sub))!.expires_at).toBe(new Date(renewedEnd * 1000).toISOString());

    expect(await step(planChange(sub, 'price_pro', now() + 2))).toMatchObject({
      action: 'plan_change',
    });
    const changed = (await licenseOf(sub))!;
    expect(changed.license_key).toBe(license.license_key);
    expect(changed.limit_overrides).toEqual({ max_installations: 5 });
    expect(changed.features).toEqual(['FISCAL_PRINTING', 'MULTI_OPERATOR', 'INVENTORY', 'REPORTS']);

    // price_pro's on_end is suspend.
    expect(await step(stripeEvent('customer.subscription.deleted', subscription(sub, 'price_pro', 1, now() + 3), now() + 3))).toMatchObject(
      { action: 'end' },
    );
    expect((await licenseOf(sub))!.status).toBe('suspended');

    expect(await step(stripeEvent('charge.refunded', charge(firstPayment), now() + 4))).toMatchObject({ action: 'refund' });
    const refunded = (await licenseOf(sub))!;
    expect(refunded).toMatchObject({ status: 'revoked', revoke_reason: 'refunded' });

    const audits = await auditCount(license.id);
    const outbox = await outboxCount(license.id);
    for (const event of replays) {
      const res = await send(event).expect(200);
      expect(res.body.event_id).toBe(event.id);
    }
    expect(await auditCount(license.id)).toBe(audits);
    expect(await outboxCount(license.id)).toBe(outbox);
    expect(await licenseOf(sub)).toEqual(refunded);
  });

  it('a quantity above 1 multiplies max_installations', async () => {
    const sub = uid('sub');
    const { license } = await purchase(sub, 'price_monthly', { quantity: 3 });
    expect(license!.limit_overrides).toEqual({ max_installations: 6 });
  });

  it('the same event twice, concurrently: one licence, one audit entry, one ledger row', async () => {
    const sub = uid('sub');
    const start = now();
    const event = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', start, end: start + 30 * DAY }),
    );
    const answers = await Promise.all([send(event), send(event), send(event)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    const licenses = await t.sql(`SELECT id FROM licenses WHERE store_subscription_id = $1`, [sub]);
    expect(licenses).toHaveLength(1);
    expect(await auditCount(licenses[0].id)).toBe(1);
    expect(await t.sql(`SELECT id FROM store_events WHERE event_id = $1`, [event.id])).toHaveLength(1);
  });

  it('an unknown event type: 200, stored ignored', async () => {
    const event = stripeEvent('payment_method.attached', { id: 'pm_1', object: 'payment_method' });
    expect((await send(event).expect(200)).body).toMatchObject({ status: 'ignored', type: 'payment_method.attached' });
    const [row] = await t.sql(`SELECT status, error FROM store_events WHERE event_id = $1`, [event.id]);
    expect(row.status).toBe('ignored');
    expect(row.error).toMatch(/not an event this server acts on/);
  });

  it('a cancellation before its purchase waits pending, then applies once the purchase lands', async () => {
    const sub = uid('sub');
    const start = now();
    const cancel = stripeEvent('customer.subscription.deleted', subscription(sub, 'price_revoke', 1, start + 10), start + 10);
    expect((await send(cancel).expect(200)).body.status).toBe('pending');
    expect(await licenseOf(sub)).toBeUndefined();
    const buy = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_create', price: 'price_revoke', start, end: start + 30 * DAY }),
      start,
    );
    await send(buy).expect(200);
    expect((await licenseOf(sub))!.status).toBe('revoked');
    const [row] = await t.sql(`SELECT status FROM store_events WHERE event_id = $1`, [cancel.id]);
    expect(row.status).toBe('processed');
  });

  it('a renewal delivered after the end, but older than it, changes nothing', async () => {
    const sub = uid('sub');
    const { start, license } = await purchase(sub);
    const endAt = start + 20 * DAY;
    await send(stripeEvent('customer.subscription.deleted', subscription(sub, 'price_monthly', 1, endAt), endAt)).expect(200);
    const ended = (await licenseOf(sub))!;
    expect(ended.expires_at).toBe(new Date(endAt * 1000).toISOString());
    const late = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_cycle', price: 'price_monthly', start: start + 30 * DAY, end: start + 60 * DAY }),
      start + 5,
    );
    expect((await send(late).expect(200)).body.status).toBe('ignored');
    expect(await licenseOf(sub)).toEqual(ended);
    expect(license!.id).toBe(ended.id);
  });

  it('a refund of a licence already revoked: 200, processed with the note "already revoked", no second audit entry or event; the admin API answers the same revoke 409', async () => {
    const sub = uid('sub');
    const pi = uid('pi');
    const { license } = await purchase(sub, 'price_monthly', { paymentIntent: pi });
    const revoke = `/api/v1/admin/licenses/${license!.id}/revoke`;
    await t.admin.post(revoke).send({ reason: 'chargeback' }).expect(200);
    const [audits, events] = [await auditCount(license!.id), await outboxCount(license!.id)];
    // One rule (RevokeLicense: a revoked licence is left as it is), two answers (docs/stores.md, The ledger).
    const refund = stripeEvent('charge.refunded', charge(pi));
    expect((await send(refund).expect(200)).body).toMatchObject({ status: 'processed', action: 'refund' });
    const [row] = await t.sql<{ status: string; error: string | null; license_id: number }>(
      'SELECT status, error, license_id FROM store_events WHERE event_id = $1',
      [refund.id],
    );
    expect(row).toEqual({ status: 'processed', error: expect.stringMatching(/^already revoked/), license_id: license!.id });
    const again = await t.admin.post(revoke).send({ reason: 'second' }).expect(409);
    expect(again.body.error.code).toBe('ALREADY_REVOKED');
    const after = (await licenseOf(sub))!;
    expect(after.revoke_reason).toBe('chargeback');
    expect(await auditCount(license!.id)).toBe(audits);
    expect(await outboxCount(license!.id)).toBe(events);
    // A store replaying the event changes nothing either: it is processed, so a repeat answers its stored outcome.
    expect((await send(refund).expect(200)).body.status).toBe('processed');
    expect(await auditCount(license!.id)).toBe(audits);
  });

  /** A purchase whose invoice.paid lacks the payments list (an includable field events of the pinned version omit). */
  async function purchaseWithoutPayments() {
    const sub = uid('sub');
    const start = now();
    const paid = invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', start, end: start + 30 * DAY });
    delete paid.payments;
    await send(stripeEvent('invoice.paid', paid, start)).expect(200);
    const pi = uid('pi');
    invoiceOfPayment.set(pi, paid.id as string);
    return { sub, start, pi };
  }

  it('a refund of an invoice whose event did not include its payments: the invoice is found through the API (STRIPE_API_KEY)', async () => {
    const { sub, start, pi } = await purchaseWithoutPayments();
    invoicePaymentCalls = [];
    const res = await send(stripeEvent('charge.refunded', charge(pi), start + 1)).expect(200);
    expect(res.body).toMatchObject({ status: 'processed', action: 'refund' });
    expect(invoicePaymentCalls).toHaveLength(1);
    expect(invoicePaymentCalls[0]).toContain(encodeURIComponent(pi));
    expect(invoicePaymentCalls[0]).toContain('Bearer sk_test_standin');
    expect((await licenseOf(sub))!).toMatchObject({ status: 'revoked', revoke_reason: 'refunded' });

    // A PaymentIntent that paid no invoice of ours: ignored, the licence unchanged.
    const { sub: other } = await purchaseWithoutPayments();
    const stranger = await send(stripeEvent('charge.refunded', charge(uid('pi')), start + 1)).expect(200);
    expect(stranger.body.status).toBe('ignored');
    expect((await licenseOf(other))!.status).not.toBe('revoked');
  });

  it('the invoice lookup failing: 500, stored failed with STORE_API_ERROR (Stripe retries), the licence unchanged', async () => {
    const { sub, start } = await purchaseWithoutPayments();
    const res = await send(stripeEvent('charge.refunded', charge(uid('pi_broken')), start + 1)).expect(500);
    expect(res.body.error).toMatchObject({ code: 'STORE_EVENT_FAILED', details: { reason_code: 'STORE_API_ERROR' } });
    expect(res.body.error.message).toMatch(/the invoice paid by pi_broken\w* could not be read through the store's API/);
    expect((await licenseOf(sub))!.status).not.toBe('revoked');
  });

  it('without STRIPE_API_KEY such a refund is failed STORE_API_KEY_MISSING (500: Stripe retries), never ignored; a replay applies it once the key is set', async () => {
    const stores = t.config.stores as { stripeApiKey?: string };
    const { sub, start, pi } = await purchaseWithoutPayments();
    stores.stripeApiKey = undefined;
    let failed: { error: { code: string; details: { id: string; reason_code: string } } };
    try {
      failed = (await send(stripeEvent('charge.refunded', charge(pi), start + 1)).expect(500)).body;
    } finally {
      stores.stripeApiKey = 'sk_test_standin';
    }
    expect(failed.error).toMatchObject({ code: 'STORE_EVENT_FAILED', details: { reason_code: 'STORE_API_KEY_MISSING' } });
    const [row] = await t.sql<{ status: string; reason_code: string }>('SELECT status, reason_code FROM store_events WHERE id = $1', [
      failed.error.details.id,
    ]);
    expect(row).toEqual({ status: 'failed', reason_code: 'STORE_API_KEY_MISSING' });
    expect((await licenseOf(sub))!.status).not.toBe('revoked');
    expect((await t.admin.post(`/api/v1/admin/store-events/${failed.error.details.id}/replay`).expect(200)).body.action).toBe('refund');
    expect((await licenseOf(sub))!.status).toBe('revoked');
  });

  it('store plan create, update and delete each commit with an audit entry naming who did it', async () => {
    const price = uid('price');
    const plan = await createPlan({ price_id: price, product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' });
    await t.admin.put(`/api/v1/admin/store-plans/${plan.id}`).send({ on_end: 'revoke', grace_days: 1 }).expect(200);
    await t.http().delete(`/api/v1/admin/store-plans/${plan.id}`).set('X-API-Key', 'test-admin-key-0123456789abcdef').expect(204);
    const entries = await t.sql<{ action: string; actor_type: string; product_code: string; details: Record<string, unknown> }>(
      `SELECT action, actor_type, product_code, details FROM audit_entries WHERE details->>'plan_id' = $1 ORDER BY id`,
      [String(plan.id)],
    );
    expect(entries.map((e) => e.action)).toEqual(['store_plan.created', 'store_plan.updated', 'store_plan.deleted']);
    expect(entries.every((e) => e.actor_type === 'admin_api' && e.product_code === 'POS_RETAIL')).toBe(true);
    expect(entries[0].details).toMatchObject({ store: 'stripe', price_id: price, license_type: 'MONTHLY', on_end: 'expire' });
    expect(entries[1].details.changes).toEqual({ on_end: { from: 'expire', to: 'revoke' }, grace_days: { from: 7, to: 1 } });
    // A refused change writes nothing: neither the plan nor an entry.
    const before = (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entries WHERE action LIKE 'store_plan.%'`))[0].n;
    await t.admin
      .post('/api/v1/admin/store-plans')
      .send({ store: 'stripe', price_id: 'price_monthly', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
      .expect(409);
    await t.admin.put('/api/v1/admin/store-plans/999999').send({ on_end: 'revoke' }).expect(404);
    await t.http().delete('/api/v1/admin/store-plans/999999').set('X-API-Key', 'test-admin-key-0123456789abcdef').expect(404);
    expect((await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entries WHERE action LIKE 'store_plan.%'`))[0].n).toBe(before);
  });

  it('a refund of a renewal sets expires_at back to that period start', async () => {
    const sub = uid('sub');
    const { start } = await purchase(sub);
    const pi = uid('pi');
    await send(
      stripeEvent(
        'invoice.paid',
        invoice({
          subscription: sub,
          reason: 'subscription_cycle',
          price: 'price_monthly',
          start: start + 30 * DAY,
          end: start + 60 * DAY,
          paymentIntent: pi,
        }),
        now() + 1,
      ),
    ).expect(200);
    await send(stripeEvent('charge.refunded', charge(pi), now() + 2)).expect(200);
    const after = (await licenseOf(sub))!;
    expect(after.expires_at).toBe(new Date((start + 30 * DAY) * 1000).toISOString());
    expect(after.status).not.toBe('revoked');
  });

  it('a subscription update without a change of items (a scheduled cancellation) changes nothing, staff changes stand', async () => {
    const sub = uid('sub');
    const { license } = await purchase(sub);
    await t.admin
      .put(`/api/v1/admin/licenses/${license!.id}`)
      .send({ limits: { max_installations: 9 } })
      .expect(200);
    const scheduled = { ...subscription(sub, 'price_monthly'), cancel_at_period_end: true };
    const withPrevious = stripeEvent('customer.subscription.updated', scheduled, now() + 1, {}, { cancel_at_period_end: false });
    expect((await send(withPrevious).expect(200)).body.status).toBe('ignored');
    expect((await licenseOf(sub))!.limit_overrides).toEqual({ max_installations: 9 });
  });

  it('a quantity change is a plan change: the new quantity multiplies max_installations', async () => {
    const sub = uid('sub');
    await purchase(sub);
    expect((await send(planChange(sub, 'price_monthly', now() + 1, 'price_monthly', 4)).expect(200)).body.action).toBe('plan_change');
    expect((await licenseOf(sub))!.limit_overrides).toEqual({ max_installations: 8 });
  });

  it('a partial refund changes nothing', async () => {
    const sub = uid('sub');
    const pi = uid('pi');
    const { license } = await purchase(sub, 'price_monthly', { paymentIntent: pi });
    expect((await send(stripeEvent('charge.refunded', charge(pi, false))).expect(200)).body.status).toBe('ignored');
    expect((await licenseOf(sub))!.status).toBe(license!.status);
  });

  it('a plan deleted while its licences live: renewals still extend, the end expires', async () => {
    const plan = await createPlan({ price_id: uid('price'), product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'revoke' });
    const price = (await t.admin.get(`/api/v1/admin/store-plans/${plan.id}`).expect(200)).body.price_id as string;
    const sub = uid('sub');
    const { start } = await purchase(sub, price);
    await t.http().delete(`/api/v1/admin/store-plans/${plan.id}`).set('X-API-Key', 'test-admin-key-0123456789abcdef').expect(204);
    await send(
      stripeEvent(
        'invoice.paid',
        invoice({ subscription: sub, reason: 'subscription_cycle', price, start: start + 30 * DAY, end: start + 60 * DAY }),
        now() + 1,
      ),
    ).expect(200);
    expect((await licenseOf(sub))!.expires_at).toBe(new Date((start + 60 * DAY) * 1000).toISOString());
    await send(stripeEvent('customer.subscription.deleted', subscription(sub, price, 1, start + 40 * DAY), now() + 2)).expect(200);
    const ended = (await licenseOf(sub))!;
    expect(ended.status).not.toBe('revoked');
    expect(ended.expires_at).toBe(new Date((start + 40 * DAY) * 1000).toISOString());
  });

  it("a plan change to another product's plan: 500, stored failed, the licence unchanged", async () => {
    const sub = uid('sub');
    const { license } = await purchase(sub);
    const audits = await auditCount(license!.id);
    const event = planChange(sub, 'price_erp', now() + 1);
    const res = await send(event).expect(500);
    expect(res.body.error.code).toBe('STORE_EVENT_FAILED');
    expect(res.body.error.message).toMatch(/ERP_SUITE/);
    expect(await licenseOf(sub)).toEqual(license);
    expect(await auditCount(license!.id)).toBe(audits);
    const [row] = await t.sql(`SELECT status FROM store_events WHERE event_id = $1`, [event.id]);
    expect(row.status).toBe('failed');
  });

  it("the store's retry of a failed event tries it again: it applies once the cause is gone", async () => {
    const stores = t.config.stores as { stripeApiKey?: string };
    const session: DeepPartial<Stripe.Checkout.Session> = {
      id: uid('cs'),
      object: 'checkout.session',
      mode: 'payment',
      customer_details: { email: 'retry@example.com', name: 'Retry Buyer' },
      payment_intent: uid('pi'),
    };
    const event = stripeEvent('checkout.session.completed', session);
    stores.stripeApiKey = undefined;
    try {
      expect((await send(event).expect(500)).body.error.message).toMatch(/STRIPE_API_KEY/);
    } finally {
      stores.stripeApiKey = 'sk_test_standin';
    }
    const retried = await send(event).expect(200);
    expect(retried.body).toMatchObject({ status: 'processed', action: 'purchase' });
    expect((await send(event).expect(200)).body.license_id).toBe(retried.body.license_id);
    expect(await t.sql(`SELECT id FROM licenses WHERE store_order_id = $1`, [session.id])).toHaveLength(1);
  });

  it('an event of another api_version: 500, stored failed naming both versions', async () => {
    const sub = uid('sub');
    const start = now();
    const event = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', start, end: start + DAY }),
      start,
      { api_version: '2024-06-20' },
    );
    const res = await send(event).expect(500);
    expect(res.body.error.message).toContain('2024-06-20');
    expect(res.body.error.message).toContain(STRIPE_API_VERSION);
    expect(await licenseOf(sub)).toBeUndefined();
  });

  it('test-mode events are ignored unless STORES_ACCEPT_TEST_EVENTS=true', async () => {
    const sub = uid('sub');
    const start = now();
    const event = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', start, end: start + DAY }),
      start,
      { livemode: false },
    );
    expect((await send(event).expect(200)).body.status).toBe('ignored');
    expect(await licenseOf(sub)).toBeUndefined();
    const stores = t.config.stores as { acceptTestEvents: boolean };
    stores.acceptTestEvents = true;
    try {
      const again = stripeEvent(
        'invoice.paid',
        invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', start, end: start + DAY }),
        start,
        { livemode: false },
      );
      expect((await send(again).expect(200)).body.status).toBe('processed');
    } finally {
      stores.acceptTestEvents = false;
    }
  });

  it('no plan for the price: ignored; after the plan is added, a replay processes it', async () => {
    const sub = uid('sub');
    const price = uid('price');
    const start = now();
    const event = stripeEvent(
      'invoice.paid',
      invoice({ subscription: sub, reason: 'subscription_create', price, start, end: start + DAY }),
    );
    const stored = (await send(event).expect(200)).body as { id: string; status: string };
    expect(stored.status).toBe('ignored');
    await createPlan({ price_id: price, product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' });
    const replayed = await t.admin.post(`/api/v1/admin/store-events/${stored.id}/replay`).expect(200);
    expect(replayed.body).toMatchObject({ status: 'processed', action: 'purchase' });
    expect(await licenseOf(sub)).toBeDefined();
    await t.admin.post(`/api/v1/admin/store-events/${stored.id}/replay`).expect(409);
  });

  it('a renewal for a subscription never seen, with a plan, creates the licence', async () => {
    const sub = uid('sub');
    const start = now();
    await send(
      stripeEvent(
        'invoice.paid',
        invoice({ subscription: sub, reason: 'subscription_cycle', price: 'price_monthly', start, end: start + 30 * DAY }),
      ),
    ).expect(200);
    expect((await licenseOf(sub))!.expires_at).toBe(new Date((start + 30 * DAY) * 1000).toISOString());
  });

  it('a one-time Checkout payment reads its line items through the SDK (the stand-in) and issues the licence', async () => {
    lineItemCalls = [];
    const session: DeepPartial<Stripe.Checkout.Session> = {
      id: uid('cs'),
      object: 'checkout.session',
      mode: 'payment',
      customer: 'cus_once',
      customer_details: { email: 'once@example.com', name: 'Once Buyer' },
      payment_intent: uid('pi'),
    };
    const res = await send(stripeEvent('checkout.session.completed', session)).expect(200);
    expect(res.body).toMatchObject({ status: 'processed', action: 'purchase' });
    expect(lineItemCalls).toHaveLength(1);
    expect(lineItemCalls[0]).toContain(`/v1/checkout/sessions/${session.id}/line_items`);
    expect(lineItemCalls[0]).toContain('Bearer sk_test_standin');
    const [row] = await t.sql(`SELECT license_type, expires_at, limits, customer_email, store_order_id FROM licenses WHERE id = $1`, [
      res.body.license_id,
    ]);
    expect(row).toMatchObject({
      license_type: 'PERPETUAL',
      expires_at: null,
      limits: { max_installations: 3 },
      customer_email: 'once@example.com',
      store_order_id: session.id,
    });
  });

  describe('money and licences agree (docs/stores.md; issue 44)', () => {
    const checkout = (id = uid('cs'), extra: DeepPartial<Stripe.Checkout.Session> = {}): DeepPartial<Stripe.Checkout.Session> => ({
      id,
      object: 'checkout.session',
      mode: 'payment',
      payment_status: 'paid',
      customer: 'cus_once',
      customer_details: { email: 'once@example.com', name: 'Once Buyer' },
      payment_intent: uid('pi'),
      ...extra,
    });
    const eventRow = (eventId: string) =>
      t
        .sql<{ id: string; status: string; reason_code: string | null }>(
          'SELECT id, status, reason_code FROM store_events WHERE event_id = $1',
          [eventId],
        )
        .then((r) => r[0]);

    it('a monthly to yearly change moves expires_at to the period Stripe now bills (items.data[].current_period_end)', async () => {
      const sub = uid('sub');
      const { start, license } = await purchase(sub);
      const yearEnd = start + 365 * DAY;
      const change = planChange(sub, 'price_yearly', start + 10);
      const item = (change.data.object as Stripe.Subscription).items.data[0] as DeepPartial<Stripe.SubscriptionItem>;
      item.current_period_start = start + 10;
      item.current_period_end = yearEnd;
      expect((await send(change).expect(200)).body).toMatchObject({ status: 'processed', action: 'plan_change', reason_code: null });
      expect((await licenseOf(sub))!).toMatchObject({
        id: license!.id,
        license_type: 'YEARLY',
        expires_at: new Date(yearEnd * 1000).toISOString(),
      });
    });

    it("invoice.paid for subscription_update applies the period end of the line whose price has a plan (not the invoice's period_end)", async () => {
      const sub = uid('sub');
      const { start } = await purchase(sub);
      const yearEnd = start + 365 * DAY;
      const paid = invoice({ subscription: sub, reason: 'subscription_update', price: 'price_yearly', start: start + 20, end: yearEnd });
      const [newLine] = paid.lines!.data!;
      // The proration line of the old price comes first, with the month's end; a line without a plan runs later still.
      paid.lines!.data = [
        {
          ...newLine,
          id: uid('il'),
          period: { start: start + 20, end: start + 30 * DAY },
          pricing: { price_details: { price: 'price_monthly' } },
        },
        {
          ...newLine,
          id: uid('il'),
          period: { start: start + 20, end: yearEnd + 99 * DAY },
          pricing: { price_details: { price: 'price_unplanned' } },
        },
        newLine,
      ] as NonNullable<typeof paid.lines>['data'];
      (paid as { period_end?: number }).period_end = start + 20;
      expect((await send(stripeEvent('invoice.paid', paid, start + 20)).expect(200)).body).toMatchObject({
        status: 'processed',
        action: 'renewal',
      });
      expect((await licenseOf(sub))!.expires_at).toBe(new Date(yearEnd * 1000).toISOString());
    });

    it("a subscription_update invoice of a subscription never seen makes its licence from the new price's line, not the old price's proration", async () => {
      const sub = uid('sub');
      const start = now();
      const yearEnd = start + 365 * DAY;
      const paid = invoice({ subscription: sub, reason: 'subscription_update', price: 'price_yearly', start, end: yearEnd });
      const [newLine] = paid.lines!.data!;
      paid.lines!.data = [
        { ...newLine, id: uid('il'), period: { start, end: start + 10 * DAY }, pricing: { price_details: { price: 'price_monthly' } } },
        newLine,
      ] as NonNullable<typeof paid.lines>['data'];
      expect((await send(stripeEvent('invoice.paid', paid, start)).expect(200)).body).toMatchObject({
        status: 'processed',
        action: 'purchase',
      });
      expect((await licenseOf(sub))!).toMatchObject({ license_type: 'YEARLY', expires_at: new Date(yearEnd * 1000).toISOString() });
    });

    it('quantities of 0, negative or fractional: 500, stored failed INVALID_QUANTITY, no licence', async () => {
      for (const quantity of [0, -2, 1.5]) {
        const sub = uid('sub');
        const start = now();
        const event = stripeEvent(
          'invoice.paid',
          invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', quantity, start, end: start + 30 * DAY }),
        );
        const res = await send(event).expect(500);
        expect(res.body.error).toMatchObject({ code: 'STORE_EVENT_FAILED', details: { reason_code: 'INVALID_QUANTITY' } });
        expect(await eventRow(event.id)).toMatchObject({ status: 'failed', reason_code: 'INVALID_QUANTITY' });
        expect(await licenseOf(sub)).toBeUndefined();
      }
    });

    it('a Stripe-Signature dated more than 300 s ahead: 400 INVALID_SIGNATURE, nothing stored', async () => {
      const before = (await storeEvents()).length;
      const event = stripeEvent('customer.created', { id: 'cus_future', object: 'customer' });
      const body = JSON.stringify(event);
      const res = await send(body, sign(body, SECRET, now() + 301 + 365 * DAY)).expect(400);
      expect(res.body.error.code).toBe('INVALID_SIGNATURE');
      await send(body, sign(body, SECRET, now() + 400)).expect(400);
      expect((await storeEvents()).length).toBe(before);
      // Within the window (clocks drift a little): accepted.
      await send(body, sign(body, SECRET, now() + 60)).expect(200);
    });

    it('a buyer name longer than customer_name holds is cut at a character boundary (no half of a surrogate pair)', async () => {
      const sub = uid('sub');
      const start = now();
      const paid = invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', start, end: start + 30 * DAY });
      paid.customer_name = `${'x'.repeat(199)}😀${'y'.repeat(500)}`;
      await send(stripeEvent('invoice.paid', paid, start)).expect(200);
      const name = (await licenseOf(sub))!.customer_name as string;
      expect(name).toBe(`${'x'.repeat(199)}😀`);
      expect([...name]).toHaveLength(200);
    });

    it('events of the previous release pinned API version are accepted; any other version is failed API_VERSION_MISMATCH', async () => {
      const sub = uid('sub');
      const start = now();
      const paid = invoice({ subscription: sub, reason: 'subscription_create', price: 'price_monthly', start, end: start + 30 * DAY });
      const previous = stripeEvent('invoice.paid', paid, start, { api_version: STRIPE_PREVIOUS_API_VERSION });
      expect(STRIPE_PREVIOUS_API_VERSION).not.toBe(STRIPE_API_VERSION);
      expect((await send(previous).expect(200)).body).toMatchObject({ status: 'processed', reason_code: null });
      const other = stripeEvent('invoice.paid', paid, start, { api_version: '2020-08-27' });
      expect((await send(other).expect(500)).body.error.details.reason_code).toBe('API_VERSION_MISMATCH');
    });

    it("no Stripe call inside a transaction: the event's row is committed before the line items call, and no connection is in a transaction meanwhile", async () => {
      const session = checkout();
      const seen: { rows: { status: string; reason_code: string | null }[]; inTransaction: number }[] = [];
      duringLineItems = async () => {
        // Another connection sees the row: it committed before the call went out.
        const rows = await t.sql<{ status: string; reason_code: string | null }>(
          `SELECT status, reason_code FROM store_events WHERE payload->'data'->'object'->>'id' = $1`,
          [session.id],
        );
        const [open] = await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('idle in transaction', 'active')
              AND xact_start IS NOT NULL AND query NOT ILIKE '%pg_stat_activity%' AND backend_type = 'client backend'
              AND query ILIKE '%store_events%'`,
        );
        seen.push({ rows, inTransaction: open.n });
      };
      try {
        const res = await send(stripeEvent('checkout.session.completed', session)).expect(200);
        expect(res.body).toMatchObject({ status: 'processed', action: 'purchase', reason_code: null });
      } finally {
        duringLineItems = undefined;
      }
      expect(seen).toEqual([{ rows: [{ status: 'pending', reason_code: null }], inTransaction: 0 }]);
    });

    it('the line items call failing: 500, stored failed STORE_API_ERROR (Stripe retries), never ignored', async () => {
      const session = checkout(uid('cs_broken'));
      const event = stripeEvent('checkout.session.completed', session);
      const res = await send(event).expect(500);
      expect(res.body.error.details.reason_code).toBe('STORE_API_ERROR');
      expect(await eventRow(event.id)).toMatchObject({ status: 'failed', reason_code: 'STORE_API_ERROR' });
    });

    it('a one-time sale without STRIPE_API_KEY: 500, failed STORE_API_KEY_MISSING; an unpaid (asynchronous) Checkout session: ignored NOT_PAID', async () => {
      const stores = t.config.stores as { stripeApiKey?: string };
      stores.stripeApiKey = undefined;
      const event = stripeEvent('checkout.session.completed', checkout());
      try {
        expect((await send(event).expect(500)).body.error.details.reason_code).toBe('STORE_API_KEY_MISSING');
      } finally {
        stores.stripeApiKey = 'sk_test_standin';
      }
      const unpaid = await send(stripeEvent('checkout.session.completed', checkout(uid('cs'), { payment_status: 'unpaid' }))).expect(200);
      expect(unpaid.body).toMatchObject({ status: 'ignored', reason_code: 'NOT_PAID' });
    });

    it('an event with the same event time as the last one applied to its subscription is applied; an older one is OUT_OF_ORDER', async () => {
      const sub = uid('sub');
      const { event } = await purchase(sub);
      const same = await send(planChange(sub, 'price_pro', event.created)).expect(200);
      expect(same.body).toMatchObject({ status: 'processed', action: 'plan_change', reason_code: null });
      expect((await licenseOf(sub))!.limits).toMatchObject({ max_installations: 5 });
      const older = await send(planChange(sub, 'price_monthly', event.created - 1, 'price_pro')).expect(200);
      expect(older.body).toMatchObject({ status: 'ignored', reason_code: 'OUT_OF_ORDER' });
    });

    it('needs attention: a failed or NO_PLAN event is told once as store_event.needs_attention and counted by the gauge on /metrics', async () => {
      const told = () =>
        t
          .sql<{ payload: { data: { id: string; reason_code: string } } }>(
            `SELECT payload FROM event_outbox WHERE type = 'store_event.needs_attention' ORDER BY created_at`,
          )
          .then((rows) => rows.map((r) => r.payload.data));
      const gauge = async () => {
        const text = (await t.admin.get('/metrics').expect(200)).text;
        return Number(/^store_events_needing_attention (\d+)$/m.exec(text)?.[1]);
      };
      const [{ n: needing }] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM store_events WHERE ${NEEDS_ATTENTION}`);
      expect(await gauge()).toBe(needing);

      const before = (await told()).length;
      const start = now();
      const noPlan = stripeEvent(
        'invoice.paid',
        invoice({ subscription: uid('sub'), reason: 'subscription_create', price: 'price_nobody', start, end: start + DAY }),
      );
      expect((await send(noPlan).expect(200)).body).toMatchObject({ status: 'ignored', reason_code: 'NO_PLAN' });
      const failing = stripeEvent('checkout.session.completed', checkout(uid('cs_broken')));
      await send(failing).expect(500);
      // Stripe's retry fails again: still told once.
      await send(failing).expect(500);
      const processedOne = stripeEvent('checkout.session.completed', checkout());
      await send(processedOne).expect(200);

      const events = (await told()).slice(before);
      expect(events.map((e) => [e.id, e.reason_code])).toEqual([
        [(await eventRow(noPlan.id)).id, 'NO_PLAN'],
        [(await eventRow(failing.id)).id, 'STORE_API_ERROR'],
      ]);
      expect(await gauge()).toBe(needing + 2);
    });

    it('every stored event has the reason code its status allows (null only when processed)', async () => {
      const rows = await t.sql<{ status: string; reason_code: string | null }>('SELECT DISTINCT status, reason_code FROM store_events');
      const allowed: Record<string, (string | null)[]> = {
        processed: [null],
        ignored: ['NO_PLAN', 'UNHANDLED_TYPE', 'NOT_PAID', 'TEST_MODE', 'OUT_OF_ORDER'],
        pending: ['AWAITING_CUSTOMER', 'UNKNOWN_SUBSCRIPTION'],
        failed: [
          'API_VERSION_MISMATCH',
          'STORE_API_KEY_MISSING',
          'STORE_API_ERROR',
          'INVALID_QUANTITY',
          'INVALID_PAYLOAD',
          'OTHER_PRODUCT',
        ],
      };
      expect(rows.length).toBeGreaterThan(5);
      for (const row of rows) expect(allowed[row.status]).toContain(row.reason_code);
    });
  });

  describe('admin API', () => {
    it('lists store-made licences by store and subscription_id, and exports the store columns', async () => {
      const sub = uid('sub');
      const { license } = await purchase(sub);
      const list = await t.admin.get(`/api/v1/admin/licenses?store=stripe&subscription_id=${sub}`).expect(200);
      expect(list.body.map((l: { id: number }) => l.id)).toEqual([license!.id]);
      const csv = await t.admin.get(`/api/v1/admin/licenses/export?subscription_id=${sub}`).expect(200);
      expect(csv.text.split('\n')[0]).toContain('store_name,store_customer_id,store_subscription_id,store_order_id');
      expect(csv.text).toContain(sub);
      const staffMade = await t.admin
        .post('/api/v1/admin/licenses')
        .send({ product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Staff made' })
        .expect(201);
      expect((await t.admin.get(`/api/v1/admin/licenses/${staffMade.body.id}`).expect(200)).body.store).toBeNull();
    });

    it('lists store events with filters and the total', async () => {
      const res = await t.admin.get('/api/v1/admin/store-events?store=stripe&status=failed&limit=5').expect(200);
      expect(res.body.length).toBeGreaterThan(0);
      expect(res.body.every((e: { status: string }) => e.status === 'failed')).toBe(true);
      expect(Number(res.headers['x-total-count'])).toBeGreaterThanOrEqual(res.body.length);
      const sub = uid('sub');
      const { license } = await purchase(sub);
      const byLicense = await t.admin.get(`/api/v1/admin/store-events?license_id=${license!.id}`).expect(200);
      expect(byLicense.body.map((e: { action: string }) => e.action)).toEqual(['purchase']);
    });

    it('plans: validation (the MaxChars rule, unknown product, unoffered feature), a duplicate price 409, update and delete', async () => {
      const bad = await t.admin
        .post('/api/v1/admin/store-plans')
        .send({ store: 'stripe', price_id: 'p'.repeat(256), product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' });
      expect(bad.status).toBe(400);
      await t.admin
        .post('/api/v1/admin/store-plans')
        .send({ store: 'shopify', price_id: 'p1', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
        .expect(400);
      await t.admin
        .post('/api/v1/admin/store-plans')
        .send({ store: 'stripe', price_id: 'p1', product_code: 'NOPE', license_type: 'MONTHLY', on_end: 'expire' })
        .expect(400);
      await t.admin
        .post('/api/v1/admin/store-plans')
        .send({
          store: 'stripe',
          price_id: 'p1',
          product_code: 'POS_RETAIL',
          license_type: 'MONTHLY',
          on_end: 'expire',
          features: ['PAYROLL'],
        })
        .expect(400);
      await t.admin
        .post('/api/v1/admin/store-plans')
        .send({ store: 'stripe', price_id: 'price_monthly', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
        .expect(409);
      const plan = await createPlan({ price_id: uid('price'), product_code: 'POS_RETAIL', license_type: 'YEARLY', on_end: 'expire' });
      const updated = await t.admin.put(`/api/v1/admin/store-plans/${plan.id}`).send({ on_end: 'suspend', grace_days: 10 }).expect(200);
      expect(updated.body).toMatchObject({ on_end: 'suspend', grace_days: 10, license_type: 'YEARLY' });
      await t.admin
        .put(`/api/v1/admin/store-plans/${plan.id}`)
        .send({ features: ['REPORTS'] })
        .expect(200);
      await t.admin
        .put(`/api/v1/admin/store-plans/${plan.id}`)
        .send({ features: ['PAYROLL'] })
        .expect(400);
      expect((await t.admin.put(`/api/v1/admin/store-plans/${plan.id}`).send({ features: null }).expect(200)).body.features).toBeNull();
      await t.admin.put(`/api/v1/admin/store-plans/${plan.id}`).send({}).expect(400);
      expect((await t.admin.get('/api/v1/admin/store-plans').expect(200)).body.map((p: { id: number }) => p.id)).toContain(plan.id);
      await t.http().delete(`/api/v1/admin/store-plans/${plan.id}`).set('X-API-Key', 'test-admin-key-0123456789abcdef').expect(204);
      await t.admin.get(`/api/v1/admin/store-plans/${plan.id}`).expect(404);
    });

    it('stores:manage is global: a token limited to products gets 403, a token for every product passes', async () => {
      const limited = await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: uid('limited'), scopes: ['licenses:read'], products: ['POS_RETAIL'] })
        .expect(201);
      await t.http().get('/api/v1/admin/store-plans').set('Authorization', `Bearer ${limited.body.token}`).expect(403);
      await t.http().get('/api/v1/admin/store-events').set('Authorization', `Bearer ${limited.body.token}`).expect(403);
      await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: uid('limited'), scopes: ['stores:manage'], products: ['POS_RETAIL'] })
        .expect(400);
      const global = await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: uid('global'), scopes: ['stores:manage'] })
        .expect(201);
      await t.http().get('/api/v1/admin/store-plans').set('Authorization', `Bearer ${global.body.token}`).expect(200);
    });
  });
});
