import type {
  IAdjustmentNotificationResponse,
  ICustomerNotificationResponse,
  ISubscriptionNotificationResponse,
  ITransactionNotificationResponse,
} from '@paddle/paddle-node-sdk';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventFanoutService } from '../src/events/event-fanout.service';
import { rowsOfLicense, storeEventCount, storeLicense } from './support/stores';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Licences from Paddle Billing purchases (docs/stores.md, Connect Paddle): our own check of Paddle-Signature, the
 * action table on the store framework, the wait for the buyer's e-mail, and the hostile deliveries of the issue.
 * Payloads are typed by the official SDK's notification types.
 */
type DeepPartial<T> = T extends (infer U)[] ? DeepPartial<U>[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;
interface PaddleEvent {
  event_id: string;
  event_type: string;
  occurred_at: string;
  notification_id: string | null;
  data: object;
}

const SECRET = 'pdl_ntfset_stores_e2e_0123456789';
const EVENTS = '/api/v1/stores/paddle/events';
const DAY = 86_400_000;
const now = () => Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

let seq = 0;
const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}`;

function paddleEvent(type: string, data: object, occurredAt = now()): PaddleEvent {
  return { event_id: uid('evt'), event_type: type, occurred_at: iso(occurredAt), notification_id: uid('ntf'), data };
}

interface TransactionInput {
  subscription: string | null;
  origin: ITransactionNotificationResponse['origin'];
  price: string;
  customer: string;
  start?: number;
  end?: number;
  quantity?: number;
  id?: string;
}

function transaction(i: TransactionInput): DeepPartial<ITransactionNotificationResponse> {
  return {
    id: i.id ?? uid('txn'),
    status: 'completed',
    customer_id: i.customer,
    origin: i.origin,
    subscription_id: i.subscription,
    collection_mode: 'automatic',
    currency_code: 'EUR',
    billing_period: i.start !== undefined && i.end !== undefined ? { starts_at: iso(i.start), ends_at: iso(i.end) } : null,
    items: [{ price_id: i.price, price: { id: i.price }, quantity: i.quantity ?? 1 }],
    payments: [],
    created_at: iso(now()),
    updated_at: iso(now()),
  };
}

function subscription(id: string, price: string, customer: string, quantity = 1, canceledAt: number | null = null) {
  const sub: DeepPartial<ISubscriptionNotificationResponse> = {
    id,
    status: canceledAt ? 'canceled' : 'active',
    customer_id: customer,
    address_id: 'add_1',
    currency_code: 'EUR',
    canceled_at: canceledAt ? iso(canceledAt) : null,
    collection_mode: 'automatic',
    billing_cycle: { interval: 'month', frequency: 1 },
    items: [{ status: 'active', quantity, recurring: true, price: { id: price } }],
    created_at: iso(now()),
    updated_at: iso(now()),
  };
  return sub;
}

function customer(id: string, email: string, name = 'Kupac d.o.o.'): DeepPartial<ICustomerNotificationResponse> {
  return { id, email, name, status: 'active', marketing_consent: false, locale: 'en', created_at: iso(now()), updated_at: iso(now()) };
}

function refund(
  transactionId: string,
  extra: DeepPartial<IAdjustmentNotificationResponse> = {},
): DeepPartial<IAdjustmentNotificationResponse> {
  return {
    id: uid('adj'),
    action: 'refund',
    type: 'full',
    transaction_id: transactionId,
    customer_id: 'ctm_x',
    reason: 'requested by the buyer',
    currency_code: 'EUR',
    status: 'approved',
    items: [],
    created_at: iso(now()),
    updated_at: iso(now()),
    ...extra,
  };
}

const signWith = (body: string, secret = SECRET, ts = Math.floor(now() / 1000)) =>
  createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex');
const header = (body: string, secret = SECRET, ts = Math.floor(now() / 1000)) => `ts=${ts};h1=${signWith(body, secret, ts)}`;

describe('stores: Paddle Billing (docs/stores.md)', () => {
  let t: TestApp;
  let standIn: Server;
  let customerCalls: string[] = [];
  /** Runs while the stand-in answers customers.get: what the database shows during the store's round trip. */
  let duringCustomerCall: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // A local stand-in for the one Paddle API call the server makes: customers.get.
    standIn = createServer((req: IncomingMessage, res: ServerResponse) => {
      customerCalls.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      if (duringCustomerCall) void duringCustomerCall().then(() => answerCustomer(req, res));
      else answerCustomer(req, res);
    });
    const answerCustomer = (req: IncomingMessage, res: ServerResponse) => {
      const m = /^\/customers\/(ctm_\w+)$/.exec(req.url ?? '');
      res.setHeader('Content-Type', 'application/json');
      if (!m || m[1] === 'ctm_missing')
        return res.writeHead(404).end(JSON.stringify({ error: { type: 'request_error', code: 'not_found', detail: 'no' } }));
      res.end(JSON.stringify({ data: customer(m[1], `api-${m[1]}@example.com`, 'From the API'), meta: { request_id: 'req_1' } }));
    };
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    const port = (standIn.address() as AddressInfo).port;
    t = await createTestApp({
      stores: { paddleWebhookSecret: SECRET, paddleApiUrl: `http://127.0.0.1:${port}`, acceptTestEvents: false },
    });
    await t.app.get(EventFanoutService).stop();
    await createPlan({
      price_id: 'pri_monthly',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      limits: { max_installations: 2 },
      features: ['REPORTS'],
      grace_days: 3,
      on_end: 'expire',
    });
    await createPlan({
      price_id: 'pri_pro',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      limits: { max_installations: 5 },
      on_end: 'suspend',
    });
    await createPlan({ price_id: 'pri_erp', product_code: 'ERP_SUITE', license_type: 'MONTHLY', on_end: 'revoke' });
    await createPlan({ price_id: 'pri_once', product_code: 'FISCAL_BRIDGE', license_type: 'PERPETUAL', on_end: 'expire' });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => standIn.close(resolve));
  });

  async function createPlan(body: Record<string, unknown>): Promise<void> {
    const res = await t.admin.post('/api/v1/admin/store-plans').send({ store: 'paddle', ...body });
    if (res.status !== 201) throw new Error(`createPlan: ${res.status} ${JSON.stringify(res.body)}`);
  }

  const send = (event: PaddleEvent | string, signature?: string) => {
    const body = typeof event === 'string' ? event : JSON.stringify(event);
    return t
      .http()
      .post(EVENTS)
      .set('Content-Type', 'application/json')
      .set('Paddle-Signature', signature ?? header(body))
      .send(body);
  };
  const licenseOf = (subscriptionId: string | number) => storeLicense(t, 'paddle', subscriptionId);
  const count = (table: 'audit_entries' | 'event_outbox', licenseId: number) => rowsOfLicense(t, table, licenseId);

  /** A known buyer, then the first transaction of a new subscription. */
  async function purchase(price = 'pri_monthly') {
    const sub = uid('sub');
    const ctm = uid('ctm');
    const start = now();
    const told = paddleEvent('customer.created', customer(ctm, `${ctm}@example.com`), start - 1000);
    await send(told).expect(200);
    const txn = transaction({ subscription: sub, origin: 'web', price, customer: ctm, start, end: start + 30 * DAY });
    const bought = paddleEvent('transaction.completed', txn, start);
    const res = await send(bought).expect(200);
    return { sub, ctm, start, txn: txn.id as string, events: [told, bought], res, license: await licenseOf(sub) };
  }

  // Refusals before verification (missing, malformed, wrong, stale signatures, bad bodies, size, no secret) are
  // test/stores-signatures.e2e-spec.ts, one table for every store.

  it('a signature with a second h1 that matches (a secret being rotated) is accepted', async () => {
    const event = paddleEvent('customer.created', customer(uid('ctm'), 'rotating@example.com'));
    const body = JSON.stringify(event);
    const ts = Math.floor(now() / 1000);
    const signature = `ts=${ts};h1=${signWith(body, 'pdl_old_secret', ts)};h1=${signWith(body, SECRET, ts)}`;
    expect((await send(body, signature).expect(200)).body).toMatchObject({ status: 'processed', event_id: event.event_id });
  });

  it('end to end: purchase → renewal → plan change → end → refund of the first payment; every replay changes nothing', async () => {
    const bought = await purchase();
    expect(bought.res.body).toMatchObject({ status: 'processed', action: 'purchase' });
    const license = bought.license!;
    expect(license).toMatchObject({
      customer_email: `${bought.ctm}@example.com`,
      customer_name: 'Kupac d.o.o.',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      limit_overrides: { max_installations: 2 },
      features: ['REPORTS'],
      grace_days: 3,
      store: { name: 'paddle', customer_id: bought.ctm, subscription_id: bought.sub, order_id: bought.txn },
    });
    expect(license.expires_at).toBe(iso(bought.start + 30 * DAY));
    const [audit] = await t.sql(`SELECT actor_type, actor FROM audit_entries WHERE license_id = $1 AND action = 'license.created'`, [
      license.id,
    ]);
    expect(audit).toEqual({ actor_type: 'store', actor: 'store:paddle' });

    const replays = [...bought.events];
    const step = async (event: PaddleEvent) => {
      replays.push(event);
      return (await send(event).expect(200)).body as { status: string; action: string };
    };
    const renewal = transaction({
      subscription: bought.sub,
      origin: 'subscription_recurring',
      price: 'pri_monthly',
      customer: bought.ctm,
      start: bought.start + 30 * DAY,
      end: bought.start + 60 * DAY,
    });
    expect(await step(paddleEvent('transaction.completed', renewal, now() + 1000))).toMatchObject({ action: 'renewal' });
    expect((await licenseOf(bought.sub))!.expires_at).toBe(iso(bought.start + 60 * DAY));

    // An update that keeps price and quantity (Paddle sends one for many reasons) changes nothing.
    expect(
      await step(paddleEvent('subscription.updated', subscription(bought.sub, 'pri_monthly', bought.ctm), now() + 1500)),
    ).toMatchObject({
      status: 'ignored',
    });
    expect(await step(paddleEvent('subscription.updated', subscription(bought.sub, 'pri_pro', bought.ctm), now() + 2000))).toMatchObject({
      action: 'plan_change',
    });
    const changed = (await licenseOf(bought.sub))!;
    expect(changed.license_key).toBe(license.license_key);
    expect(changed.limit_overrides).toEqual({ max_installations: 5 });

    const cancel = subscription(bought.sub, 'pri_pro', bought.ctm, 1, now() + 3000);
    expect(await step(paddleEvent('subscription.canceled', cancel, now() + 3000))).toMatchObject({ action: 'end' });
    expect((await licenseOf(bought.sub))!.status).toBe('suspended');

    expect(await step(paddleEvent('adjustment.updated', refund(bought.txn), now() + 4000))).toMatchObject({ action: 'refund' });
    const refunded = (await licenseOf(bought.sub))!;
    expect(refunded).toMatchObject({ status: 'revoked', revoke_reason: 'refunded' });

    const audits = await count('audit_entries', license.id);
    const outbox = await count('event_outbox', license.id);
    for (const event of replays) expect((await send(event).expect(200)).body.event_id).toBe(event.event_id);
    expect(await count('audit_entries', license.id)).toBe(audits);
    expect(await count('event_outbox', license.id)).toBe(outbox);
    expect(await licenseOf(bought.sub)).toEqual(refunded);
  });

  it('a purchase without an e-mail waits pending, and becomes a licence once the customer event arrives', async () => {
    const sub = uid('sub');
    const ctm = uid('ctm');
    const start = now();
    const txn = transaction({ subscription: sub, origin: 'web', price: 'pri_monthly', customer: ctm, start, end: start + 30 * DAY });
    const bought = await send(paddleEvent('transaction.completed', txn, start)).expect(200);
    expect(bought.body).toMatchObject({ status: 'pending' });
    expect(bought.body.error).toContain(ctm);
    expect(await licenseOf(sub)).toBeUndefined();
    // A cancellation that also came early waits for the purchase, and follows it.
    const cancel = await send(
      paddleEvent('subscription.canceled', subscription(sub, 'pri_monthly', ctm, 1, start + 5 * DAY), start + 5 * DAY),
    ).expect(200);
    expect(cancel.body.status).toBe('pending');

    const told = await send(paddleEvent('customer.updated', customer(ctm, 'late@example.com', 'Late Buyer'), start + 1000)).expect(200);
    expect(told.body).toMatchObject({ status: 'processed', action: 'customer' });
    const license = (await licenseOf(sub))!;
    expect(license).toMatchObject({ customer_email: 'late@example.com', customer_name: 'Late Buyer' });
    expect(license.expires_at).toBe(iso(start + 5 * DAY));
    const rows = await t.sql<{ status: string }>(`SELECT status FROM store_events WHERE id IN ($1, $2) ORDER BY id`, [
      bought.body.id,
      cancel.body.id,
    ]);
    expect(rows.map((r) => r.status)).toEqual(['processed', 'processed']);
  });

  it('a purchase and its customer event at the same moment: neither misses the other (every purchase gets its licence)', async () => {
    const pairs = Array.from({ length: 8 }, () => ({ sub: uid('sub'), ctm: uid('ctm') }));
    const start = now();
    await Promise.all(
      pairs.flatMap(({ sub, ctm }) => [
        send(paddleEvent('customer.created', customer(ctm, `${ctm}@example.com`), start)).expect(200),
        send(
          paddleEvent(
            'transaction.completed',
            transaction({ subscription: sub, origin: 'web', price: 'pri_monthly', customer: ctm, start, end: start + DAY }),
            start,
          ),
        ).expect(200),
        send(paddleEvent('subscription.canceled', subscription(sub, 'pri_monthly', ctm, 1, start + 1000), start + 1000)).expect(200),
      ]),
    );
    for (const { sub, ctm } of pairs) {
      const license = await licenseOf(sub);
      expect(license).toMatchObject({ customer_email: `${ctm}@example.com`, expires_at: iso(start + 1000) });
    }
  });

  it('with PADDLE_API_KEY, an unknown buyer is read through customers.get (the SDK pointed at a local stand-in)', async () => {
    const stores = t.config.stores as { paddleApiKey?: string };
    stores.paddleApiKey = 'pdl_apikey_standin';
    customerCalls = [];
    try {
      const sub = uid('sub');
      const ctm = uid('ctm');
      const start = now();
      const txn = transaction({ subscription: sub, origin: 'web', price: 'pri_monthly', customer: ctm, start, end: start + 30 * DAY });
      expect((await send(paddleEvent('transaction.completed', txn, start)).expect(200)).body.status).toBe('processed');
      expect(customerCalls).toEqual([`GET /customers/${ctm} bearer pdl_apikey_standin`]);
      expect((await licenseOf(sub))!).toMatchObject({ customer_email: `api-${ctm}@example.com`, customer_name: 'From the API' });
    } finally {
      stores.paddleApiKey = undefined;
    }
  });

  it('customers.get failing: 500, stored failed (Paddle retries), no licence', async () => {
    const stores = t.config.stores as { paddleApiKey?: string };
    stores.paddleApiKey = 'pdl_apikey_standin';
    try {
      const sub = uid('sub');
      const txn = transaction({
        subscription: sub,
        origin: 'web',
        price: 'pri_monthly',
        customer: 'ctm_missing',
        start: now(),
        end: now() + DAY,
      });
      const event = paddleEvent('transaction.completed', txn);
      const res = await send(event).expect(500);
      expect(res.body.error.code).toBe('STORE_EVENT_FAILED');
      expect(await licenseOf(sub)).toBeUndefined();
      // An id that is no Paddle id is not sent to the API at all: the purchase waits for a customer event.
      customerCalls = [];
      const odd = transaction({ subscription: uid('sub'), origin: 'web', price: 'pri_monthly', customer: 'ctm_x/../../transactions' });
      expect((await send(paddleEvent('transaction.completed', odd)).expect(200)).body.status).toBe('pending');
      expect(customerCalls).toEqual([]);
    } finally {
      stores.paddleApiKey = undefined;
    }
  });

  it('a one-time transaction (no subscription) issues a licence per license_type', async () => {
    const ctm = uid('ctm');
    await send(paddleEvent('customer.created', customer(ctm, 'once@example.com'))).expect(200);
    const txn = transaction({ subscription: null, origin: 'api', price: 'pri_once', customer: ctm, quantity: 2 });
    const res = await send(paddleEvent('transaction.completed', txn)).expect(200);
    expect(res.body).toMatchObject({ status: 'processed', action: 'purchase' });
    const [row] = await t.sql(`SELECT license_type, expires_at, store_order_id, customer_email FROM licenses WHERE id = $1`, [
      res.body.license_id,
    ]);
    expect(row).toEqual({ license_type: 'PERPETUAL', expires_at: null, store_order_id: txn.id, customer_email: 'once@example.com' });
  });

  it('a refund of a renewal sets expires_at back to that period start; partial and unapproved refunds change nothing', async () => {
    const { sub, ctm, start } = await purchase();
    const renewal = transaction({
      subscription: sub,
      origin: 'subscription_recurring',
      price: 'pri_monthly',
      customer: ctm,
      start: start + 30 * DAY,
      end: start + 60 * DAY,
    });
    await send(paddleEvent('transaction.completed', renewal, now() + 1000)).expect(200);
    const partial = await send(paddleEvent('adjustment.updated', refund(renewal.id as string, { type: 'partial' }), now() + 2000)).expect(
      200,
    );
    expect(partial.body.status).toBe('ignored');
    const waiting = refund(renewal.id as string, { status: 'pending_approval' });
    expect((await send(paddleEvent('adjustment.created', waiting, now() + 2000)).expect(200)).body.status).toBe('ignored');
    expect((await licenseOf(sub))!.expires_at).toBe(iso(start + 60 * DAY));
    await send(paddleEvent('adjustment.updated', refund(renewal.id as string), now() + 3000)).expect(200);
    const after = (await licenseOf(sub))!;
    expect(after.expires_at).toBe(iso(start + 30 * DAY));
    expect(after.status).not.toBe('revoked');
  });

  it('a refund of a licence already revoked: 200, nothing changes', async () => {
    const { sub, txn, license } = await purchase();
    await t.admin.post(`/api/v1/admin/licenses/${license!.id}/revoke`).send({ reason: 'chargeback' }).expect(200);
    const audits = await count('audit_entries', license!.id);
    expect((await send(paddleEvent('adjustment.updated', refund(txn))).expect(200)).body.status).toBe('processed');
    expect((await licenseOf(sub))!.revoke_reason).toBe('chargeback');
    expect(await count('audit_entries', license!.id)).toBe(audits);
  });

  it("a plan change to another product's plan: 500, stored failed, the licence unchanged", async () => {
    const { sub, ctm, license } = await purchase();
    const event = paddleEvent('subscription.updated', subscription(sub, 'pri_erp', ctm), now() + 1000);
    const res = await send(event).expect(500);
    expect(res.body.error.message).toMatch(/ERP_SUITE/);
    expect(await licenseOf(sub)).toEqual(license);
    const [row] = await t.sql(`SELECT status FROM store_events WHERE event_id = $1`, [event.event_id]);
    expect(row.status).toBe('failed');
  });

  it('the same event twice, concurrently: one licence, one ledger row', async () => {
    const sub = uid('sub');
    const ctm = uid('ctm');
    await send(paddleEvent('customer.created', customer(ctm, 'twice@example.com'))).expect(200);
    const event = paddleEvent(
      'transaction.completed',
      transaction({ subscription: sub, origin: 'web', price: 'pri_monthly', customer: ctm, start: now(), end: now() + DAY }),
    );
    const answers = await Promise.all([send(event), send(event), send(event)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await t.sql(`SELECT id FROM licenses WHERE store_subscription_id = $1`, [sub])).toHaveLength(1);
    expect(await t.sql(`SELECT id FROM store_events WHERE event_id = $1`, [event.event_id])).toHaveLength(1);
  });

  it('an unknown event type: 200, ignored; a transaction of another origin changes nothing', async () => {
    expect((await send(paddleEvent('address.created', { id: 'add_1' })).expect(200)).body.status).toBe('ignored');
    const sub = uid('sub');
    const update = transaction({ subscription: sub, origin: 'subscription_update', price: 'pri_monthly', customer: 'ctm_x' });
    expect((await send(paddleEvent('transaction.completed', update)).expect(200)).body.status).toBe('ignored');
  });

  it('Paddle has no test-mode flag (its sandbox signs with its own secret): events are processed whatever STORES_ACCEPT_TEST_EVENTS says', async () => {
    expect(t.config.stores?.acceptTestEvents).toBe(false);
    expect((await purchase()).res.body.status).toBe('processed');
  });

  describe('issue 44: bounded signature cost, plan change periods, no call inside a transaction', () => {
    it('3,000 h1 candidates: 400 INVALID_SIGNATURE before any HMAC, nothing stored; up to 4 candidates are checked, any may match', async () => {
      const event = paddleEvent('customer.created', customer(uid('ctm'), 'many@example.com'));
      const body = JSON.stringify(event);
      const ts = Math.floor(now() / 1000);
      const before = await storeEventCount(t);
      const flood = await send(body, `ts=${ts};${Array(3000).fill('h1=0').join(';')}`).expect(400);
      expect(flood.body.error).toMatchObject({ code: 'INVALID_SIGNATURE', message: expect.stringMatching(/more than 4 signatures/) });
      // Five candidates, the right one among them: refused all the same (a header may offer at most four).
      const five = [1, 2, 3, 4].map((i) => `h1=${signWith(body, `old_${i}`, ts)}`).join(';');
      await send(body, `ts=${ts};${five};h1=${signWith(body, SECRET, ts)}`).expect(400);
      expect(await storeEventCount(t)).toBe(before);
      const four = [1, 2, 3].map((i) => `h1=${signWith(body, `old_${i}`, ts)}`).join(';');
      expect((await send(body, `ts=${ts};${four};h1=${signWith(body, SECRET, ts)}`).expect(200)).body.status).toBe('processed');
    });

    it('a change to another price moves expires_at to current_billing_period.ends_at', async () => {
      await createPlan({ price_id: 'pri_yearly', product_code: 'POS_RETAIL', license_type: 'YEARLY', on_end: 'expire' });
      const { sub, ctm, start, license } = await purchase();
      const yearEnd = start + 365 * DAY;
      const updated = {
        ...subscription(sub, 'pri_yearly', ctm),
        current_billing_period: { starts_at: iso(start + 1000), ends_at: iso(yearEnd) },
      };
      const res = await send(paddleEvent('subscription.updated', updated, start + 1000)).expect(200);
      expect(res.body).toMatchObject({ status: 'processed', action: 'plan_change', reason_code: null });
      expect((await licenseOf(sub))!).toMatchObject({ id: license!.id, license_type: 'YEARLY', expires_at: iso(yearEnd) });
    });

    it("customers.get runs after the event's row committed, outside any transaction; a purchase waiting for its buyer is pending AWAITING_CUSTOMER", async () => {
      const stores = t.config.stores as { paddleApiKey?: string };
      const ctm = uid('ctm');
      const sub = uid('sub');
      const txn = transaction({
        subscription: sub,
        origin: 'web',
        price: 'pri_monthly',
        customer: ctm,
        start: now(),
        end: now() + 30 * DAY,
      });
      const event = paddleEvent('transaction.completed', txn);
      // Without PADDLE_API_KEY the buyer's e-mail waits for a customer event.
      expect(
        (await send(paddleEvent('transaction.completed', { ...txn, id: uid('txn'), subscription_id: uid('sub') })).expect(200)).body,
      ).toMatchObject({
        status: 'pending',
        reason_code: 'AWAITING_CUSTOMER',
      });
      const seen: string[][] = [];
      duringCustomerCall = async () => {
        const rows = await t.sql<{ status: string }>('SELECT status FROM store_events WHERE event_id = $1', [event.event_id]);
        seen.push(rows.map((r) => r.status));
      };
      stores.paddleApiKey = 'pdl_standin_key';
      try {
        expect((await send(event).expect(200)).body).toMatchObject({ status: 'processed', action: 'purchase' });
      } finally {
        stores.paddleApiKey = undefined;
        duringCustomerCall = undefined;
      }
      expect(seen).toEqual([['pending']]);
    });
  });
});
