import { createHash, createHmac } from 'node:crypto';
import type {
  LemonSqueezyOrder,
  LemonSqueezySubscription,
  LemonSqueezySubscriptionInvoice,
  LemonSqueezyWebhook,
} from '../src/stores/lemonsqueezy/lemonsqueezy-payloads';
import { EventFanoutService } from '../src/events/event-fanout.service';
import { rowsOfLicense, storeLicense } from './support/stores';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Licences from Lemon Squeezy purchases (docs/stores.md, Connect Lemon Squeezy): X-Signature over the raw body, the
 * body's SHA-256 as its event id, test mode, the action table on the store framework and the hostile deliveries of
 * the issue. Payloads are typed by our own types, written from Lemon Squeezy's documented webhook bodies.
 */
type DeepPartial<T> = T extends (infer U)[] ? DeepPartial<U>[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;
type Webhook<A> = { meta: LemonSqueezyWebhook['meta']; data: { type: string; id: string; attributes: DeepPartial<A> } };

const SECRET = 'ls_stores_e2e_signing_secret';
const EVENTS = '/api/v1/stores/lemonsqueezy/events';
const DAY = 86_400_000;
const now = () => Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

let seq = 0;
const nextId = () => Date.now() * 1000 + ++seq;

function webhook<A>(eventName: string, type: string, id: number, attributes: DeepPartial<A>, testMode = false): Webhook<A> {
  return { meta: { event_name: eventName, test_mode: testMode, webhook_id: 'wh_1' }, data: { type, id: String(id), attributes } };
}

const buyer = { customer_id: 42, user_name: 'Kupac d.o.o.', user_email: 'kupac@example.com' };

function order(id: number, variant: number, at = now(), extra: DeepPartial<LemonSqueezyOrder> = {}) {
  return webhook<LemonSqueezyOrder>('order_created', 'orders', id, {
    ...buyer,
    store_id: 1,
    identifier: `ord-${id}`,
    order_number: id,
    status: 'paid',
    refunded: false,
    first_order_item: { id: id + 1, order_id: id, product_id: 7, variant_id: variant, quantity: 1 },
    created_at: iso(at),
    updated_at: iso(at),
    ...extra,
  });
}

interface SubInput {
  id: number;
  order: number;
  variant: number;
  at: number;
  renewsAt?: number;
  endsAt?: number | null;
  quantity?: number;
  event?: string;
  testMode?: boolean;
}
function sub(i: SubInput) {
  return webhook<LemonSqueezySubscription>(
    i.event ?? 'subscription_created',
    'subscriptions',
    i.id,
    {
      ...buyer,
      store_id: 1,
      order_id: i.order,
      order_item_id: i.order + 1,
      product_id: 7,
      variant_id: i.variant,
      status: i.endsAt ? 'expired' : 'active',
      renews_at: iso(i.renewsAt ?? i.at + 30 * DAY),
      ends_at: i.endsAt ? iso(i.endsAt) : null,
      first_subscription_item: { id: i.id + 5, subscription_id: i.id, price_id: 900, quantity: i.quantity ?? 1 },
      created_at: iso(i.at),
      updated_at: iso(i.at),
    },
    i.testMode,
  );
}

function invoice(id: number, subscription: number, at: number, extra: DeepPartial<LemonSqueezySubscriptionInvoice> = {}) {
  return webhook<LemonSqueezySubscriptionInvoice>('subscription_payment_success', 'subscription-invoices', id, {
    ...buyer,
    store_id: 1,
    subscription_id: subscription,
    billing_reason: 'renewal',
    status: 'paid',
    refunded: false,
    created_at: iso(at),
    updated_at: iso(at),
    ...extra,
  });
}

const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

describe('stores: Lemon Squeezy (docs/stores.md)', () => {
  let t: TestApp;
  const VARIANT = 101;
  const PRO = 102;
  const ERP = 103;
  const ONCE = 104;

  beforeAll(async () => {
    t = await createTestApp({ stores: { lemonsqueezyWebhookSecret: SECRET, acceptTestEvents: false } });
    await t.app.get(EventFanoutService).stop();
    const plans = [
      {
        price_id: String(VARIANT),
        product_code: 'POS_RETAIL',
        license_type: 'MONTHLY',
        limits: { max_installations: 2 },
        on_end: 'expire',
      },
      { price_id: String(PRO), product_code: 'POS_RETAIL', license_type: 'MONTHLY', limits: { max_installations: 5 }, on_end: 'suspend' },
      { price_id: String(ERP), product_code: 'ERP_SUITE', license_type: 'MONTHLY', on_end: 'revoke' },
      { price_id: String(ONCE), product_code: 'FISCAL_BRIDGE', license_type: 'YEARLY', on_end: 'expire' },
    ];
    for (const plan of plans)
      await t.admin
        .post('/api/v1/admin/store-plans')
        .send({ store: 'lemonsqueezy', ...plan })
        .expect(201);
  }, 60_000);
  afterAll(() => t.close());

  const send = (event: object | string, signature?: string) => {
    const body = typeof event === 'string' ? event : JSON.stringify(event);
    return t
      .http()
      .post(EVENTS)
      .set('Content-Type', 'application/json')
      .set('X-Signature', signature ?? sign(body))
      .send(body);
  };
  const licenseOf = (subscriptionId: string | number) => storeLicense(t, 'lemonsqueezy', subscriptionId);
  const count = (table: 'audit_entries' | 'event_outbox', licenseId: number) => rowsOfLicense(t, table, licenseId);

  async function purchase(variant = VARIANT) {
    const at = now();
    const orderId = nextId();
    const subId = nextId();
    const created = sub({ id: subId, order: orderId, variant, at });
    const res = await send(created).expect(200);
    return { at, orderId, subId, created, res, license: await licenseOf(subId) };
  }

  // Refusals before verification (missing, malformed, wrong signatures, bad bodies, size, no secret) are
  // test/stores-signatures.e2e-spec.ts, one table for every store.

  it('the event id is the hex SHA-256 of the raw body: the same body twice (even concurrently) is one change', async () => {
    const at = now();
    const subId = nextId();
    const body = JSON.stringify(sub({ id: subId, order: nextId(), variant: VARIANT, at }));
    const answers = await Promise.all([send(body), send(body), send(body)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(answers[0].body.event_id).toBe(createHash('sha256').update(body).digest('hex'));
    const licenses = await t.sql(`SELECT id FROM licenses WHERE store_subscription_id = $1`, [String(subId)]);
    expect(licenses).toHaveLength(1);
    expect(await count('audit_entries', licenses[0].id)).toBe(1);
  });

  it('end to end: purchase → renewal → plan change → end → refund of the first order; every replay changes nothing', async () => {
    const bought = await purchase();
    expect(bought.res.body).toMatchObject({ status: 'processed', action: 'purchase' });
    const license = bought.license!;
    expect(license).toMatchObject({
      customer_email: 'kupac@example.com',
      customer_name: 'Kupac d.o.o.',
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      limit_overrides: { max_installations: 2 },
      store: { name: 'lemonsqueezy', customer_id: '42', subscription_id: String(bought.subId), order_id: String(bought.orderId) },
    });
    expect(license.expires_at).toBe(iso(bought.at + 30 * DAY));
    const [audit] = await t.sql(`SELECT actor FROM audit_entries WHERE license_id = $1 AND action = 'license.created'`, [license.id]);
    expect(audit.actor).toBe('store:lemonsqueezy');

    // The subscription's first order arrives too: it is the same purchase, not a second licence.
    const firstOrder = order(bought.orderId, VARIANT, bought.at);
    expect((await send(firstOrder).expect(200)).body).toMatchObject({ status: 'processed', license_id: license.id });

    const replays: object[] = [bought.created, firstOrder];
    const step = async (event: object) => {
      replays.push(event);
      return (await send(event).expect(200)).body as { status: string; action: string };
    };
    const paidAt = bought.at + 30 * DAY;
    expect(await step(invoice(nextId(), bought.subId, paidAt))).toMatchObject({ action: 'renewal' });
    // An invoice names no period: a MONTHLY licence runs a month from the payment.
    const renewed = new Date(paidAt);
    renewed.setUTCMonth(renewed.getUTCMonth() + 1);
    expect((await licenseOf(bought.subId))!.expires_at).toBe(renewed.toISOString());

    const sameVariant = sub({
      id: bought.subId,
      order: bought.orderId,
      variant: VARIANT,
      at: paidAt + 1000,
      event: 'subscription_updated',
    });
    expect(await step(sameVariant)).toMatchObject({ status: 'ignored' });
    const pro = sub({ id: bought.subId, order: bought.orderId, variant: PRO, at: paidAt + 2000, event: 'subscription_updated' });
    expect(await step(pro)).toMatchObject({ action: 'plan_change' });
    const changed = (await licenseOf(bought.subId))!;
    expect(changed.license_key).toBe(license.license_key);
    expect(changed.limit_overrides).toEqual({ max_installations: 5 });

    const expired = sub({
      id: bought.subId,
      order: bought.orderId,
      variant: PRO,
      at: paidAt + 3000,
      endsAt: paidAt + 3000,
      event: 'subscription_expired',
    });
    expect(await step(expired)).toMatchObject({ action: 'end' });
    expect((await licenseOf(bought.subId))!.status).toBe('suspended');

    const refunded = order(bought.orderId, VARIANT, paidAt + 4000, { status: 'refunded', refunded: true });
    refunded.meta.event_name = 'order_refunded';
    expect(await step(refunded)).toMatchObject({ action: 'refund' });
    const after = (await licenseOf(bought.subId))!;
    expect(after).toMatchObject({ status: 'revoked', revoke_reason: 'refunded' });

    const audits = await count('audit_entries', license.id);
    const outbox = await count('event_outbox', license.id);
    for (const event of replays) await send(event).expect(200);
    expect(await count('audit_entries', license.id)).toBe(audits);
    expect(await count('event_outbox', license.id)).toBe(outbox);
    expect(await licenseOf(bought.subId)).toEqual(after);
  });

  it("an order that comes before its subscription: one licence, which then follows the subscription's period", async () => {
    const at = now();
    const orderId = nextId();
    const subId = nextId();
    const first = await send(order(orderId, VARIANT, at)).expect(200);
    expect(first.body.action).toBe('purchase');
    await send(sub({ id: subId, order: orderId, variant: VARIANT, at, renewsAt: at + 31 * DAY })).expect(200);
    const licenses = await t.sql<{ id: number }>(`SELECT id FROM licenses WHERE store_name = 'lemonsqueezy' AND store_order_id = $1`, [
      String(orderId),
    ]);
    expect(licenses).toEqual([{ id: first.body.license_id }]);
    const license = (await licenseOf(subId))!;
    expect(license.id).toBe(first.body.license_id);
    expect(license.expires_at).toBe(iso(at + 31 * DAY));
    // The subscription's variant is the one applied: an update that keeps it changes nothing.
    const same = sub({ id: subId, order: orderId, variant: VARIANT, at: at + 1000, event: 'subscription_updated' });
    expect((await send(same).expect(200)).body.status).toBe('ignored');
  });

  it('a one-time order issues a licence per license_type', async () => {
    const res = await send(order(nextId(), ONCE)).expect(200);
    expect(res.body).toMatchObject({ status: 'processed', action: 'purchase' });
    const [row] = await t.sql(`SELECT license_type, store_subscription_id FROM licenses WHERE id = $1`, [res.body.license_id]);
    expect(row).toEqual({ license_type: 'YEARLY', store_subscription_id: null });
  });

  it('events for an unknown subscription wait pending, and apply once its purchase lands', async () => {
    const at = now();
    const subId = nextId();
    const orderId = nextId();
    const expired = sub({ id: subId, order: orderId, variant: VARIANT, at: at + 5000, endsAt: at + 5000, event: 'subscription_expired' });
    expect((await send(expired).expect(200)).body.status).toBe('pending');
    await send(sub({ id: subId, order: orderId, variant: VARIANT, at })).expect(200);
    expect((await licenseOf(subId))!.expires_at).toBe(iso(at + 5000));
  });

  it('a refund of a renewal sets expires_at back to the payment; a partial refund changes nothing', async () => {
    const { subId, at } = await purchase();
    const invoiceId = nextId();
    await send(invoice(invoiceId, subId, at + 30 * DAY)).expect(200);
    const partial = invoice(invoiceId, subId, at + 30 * DAY + 1000, { status: 'partial_refund' });
    partial.meta.event_name = 'subscription_payment_refunded';
    expect((await send(partial).expect(200)).body.status).toBe('ignored');
    const full = invoice(invoiceId, subId, at + 30 * DAY + 2000, { status: 'refunded', refunded: true });
    full.meta.event_name = 'subscription_payment_refunded';
    expect((await send(full).expect(200)).body.action).toBe('refund');
    const after = (await licenseOf(subId))!;
    expect(after.expires_at).toBe(iso(at + 30 * DAY));
    expect(after.status).not.toBe('revoked');
  });

  it('a refund of a licence already revoked: 200, nothing changes', async () => {
    const { orderId, subId, license } = await purchase();
    await t.admin.post(`/api/v1/admin/licenses/${license!.id}/revoke`).send({ reason: 'chargeback' }).expect(200);
    const audits = await count('audit_entries', license!.id);
    const refunded = order(orderId, VARIANT, now() + 1000, { status: 'refunded', refunded: true });
    refunded.meta.event_name = 'order_refunded';
    expect((await send(refunded).expect(200)).body.status).toBe('processed');
    expect((await licenseOf(subId))!.revoke_reason).toBe('chargeback');
    expect(await count('audit_entries', license!.id)).toBe(audits);
  });

  it("a plan change to another product's plan: 500, stored failed, the licence unchanged", async () => {
    const { orderId, subId, at, license } = await purchase();
    const res = await send(sub({ id: subId, order: orderId, variant: ERP, at: at + 1000, event: 'subscription_updated' })).expect(500);
    expect(res.body.error).toMatchObject({ code: 'STORE_EVENT_FAILED' });
    expect(res.body.error.message).toMatch(/ERP_SUITE/);
    expect(await licenseOf(subId)).toEqual(license);
  });

  it('test-mode events (meta.test_mode) are ignored unless STORES_ACCEPT_TEST_EVENTS=true', async () => {
    const subId = nextId();
    const at = now();
    const testEvent = sub({ id: subId, order: nextId(), variant: VARIANT, at, testMode: true });
    const ignored = await send(testEvent).expect(200);
    expect(ignored.body.status).toBe('ignored');
    expect(ignored.body.error).toMatch(/STORES_ACCEPT_TEST_EVENTS/);
    expect(await licenseOf(subId)).toBeUndefined();
    const stores = t.config.stores as { acceptTestEvents: boolean };
    stores.acceptTestEvents = true;
    try {
      // Once accepted, a replay of the stored event processes it.
      expect((await t.admin.post(`/api/v1/admin/store-events/${ignored.body.id}/replay`).expect(200)).body.status).toBe('processed');
      expect(await licenseOf(subId)).toBeDefined();
    } finally {
      stores.acceptTestEvents = false;
    }
  });

  it('an unknown event type: 200, ignored; the initial payment of a subscription changes nothing (its creation bought)', async () => {
    expect((await send(webhook('license_key_created', 'license-keys', nextId(), {})).expect(200)).body.status).toBe('ignored');
    const { subId } = await purchase();
    const initial = invoice(nextId(), subId, now(), { billing_reason: 'initial' });
    expect((await send(initial).expect(200)).body.status).toBe('ignored');
  });

  describe('money and licences agree (docs/stores.md; issue 44)', () => {
    it("a refund of Bob's subscription invoice 5001 does not revoke Alice's one-time order 5001 of another product; it undoes Bob's renewal", async () => {
      const alice = await send(order(5001, ONCE, now(), { user_name: 'Alice', user_email: 'alice@example.com', customer_id: 1 })).expect(
        200,
      );
      expect(alice.body).toMatchObject({ status: 'processed', action: 'purchase' });
      const bob = await purchase();
      const paidAt = bob.at + 30 * DAY;
      expect((await send(invoice(5001, bob.subId, paidAt)).expect(200)).body).toMatchObject({ status: 'processed', action: 'renewal' });
      expect((await licenseOf(bob.subId))!.expires_at).not.toBe(iso(paidAt));

      const refunded = invoice(5001, bob.subId, paidAt + 1000, { status: 'refunded', refunded: true });
      refunded.meta.event_name = 'subscription_payment_refunded';
      expect((await send(refunded).expect(200)).body).toMatchObject({ status: 'processed', action: 'refund', license_id: bob.license!.id });
      const [aliceNow] = await t.sql<{ revoked: boolean }>('SELECT revoked FROM licenses WHERE id = $1', [alice.body.license_id]);
      expect(aliceNow.revoked).toBe(false);
      expect((await licenseOf(bob.subId))!.expires_at).toBe(iso(paidAt));

      // And the other way round: Alice's order refund is an order's, and touches only her licence.
      const aliceRefund = order(5001, ONCE, now(), { status: 'refunded', refunded: true, customer_id: 1 });
      aliceRefund.meta.event_name = 'order_refunded';
      expect((await send(aliceRefund).expect(200)).body).toMatchObject({ action: 'refund', license_id: alice.body.license_id });
      expect((await licenseOf(bob.subId))!.status).not.toBe('revoked');
    });

    it("a refund naming a subscription matches only that subscription's payment", async () => {
      const mine = await purchase();
      const other = await purchase();
      const invoiceId = nextId();
      await send(invoice(invoiceId, mine.subId, mine.at + 30 * DAY)).expect(200);
      const wrong = invoice(invoiceId, other.subId, mine.at + 30 * DAY + 1000, { status: 'refunded', refunded: true });
      wrong.meta.event_name = 'subscription_payment_refunded';
      expect((await send(wrong).expect(200)).body).toMatchObject({ status: 'ignored', reason_code: 'UNHANDLED_TYPE' });
      expect((await licenseOf(mine.subId))!.expires_at).not.toBe(iso(mine.at + 30 * DAY));
    });

    it('a change to another variant moves expires_at to the renews_at Lemon Squeezy now bills', async () => {
      const bought = await purchase();
      const renewsAt = bought.at + 365 * DAY;
      const changed = sub({
        id: bought.subId,
        order: bought.orderId,
        variant: PRO,
        at: bought.at + 1000,
        renewsAt,
        event: 'subscription_updated',
      });
      expect((await send(changed).expect(200)).body).toMatchObject({ status: 'processed', action: 'plan_change' });
      expect((await licenseOf(bought.subId))!.expires_at).toBe(iso(renewsAt));
    });

    it('subscription_payment_success extends to the latest known renews_at, else by one license_type period', async () => {
      const bought = await purchase();
      const paidAt = bought.at + 30 * DAY;
      // Lemon Squeezy tells the next renews_at on its subscription_updated (same variant: no plan change) ...
      const nextRenewal = paidAt + 31 * DAY;
      const told = sub({
        id: bought.subId,
        order: bought.orderId,
        variant: VARIANT,
        at: paidAt - 1000,
        renewsAt: nextRenewal,
        event: 'subscription_updated',
      });
      expect((await send(told).expect(200)).body.status).toBe('ignored');
      // ... and the payment extends to it, not to a month from the payment.
      expect((await send(invoice(nextId(), bought.subId, paidAt)).expect(200)).body.action).toBe('renewal');
      expect((await licenseOf(bought.subId))!.expires_at).toBe(iso(nextRenewal));

      // Without a renews_at after the payment: one MONTHLY period from the payment.
      const second = await purchase();
      const secondPaid = second.at + 30 * DAY;
      await send(invoice(nextId(), second.subId, secondPaid)).expect(200);
      const monthLater = new Date(secondPaid);
      monthLater.setUTCMonth(monthLater.getUTCMonth() + 1);
      expect((await licenseOf(second.subId))!.expires_at).toBe(monthLater.toISOString());
    });

    it('a payment of a subscription never seen waits pending (UNKNOWN_SUBSCRIPTION) and applies once its purchase lands', async () => {
      const at = now();
      const subId = nextId();
      const orderId = nextId();
      const paid = await send(invoice(nextId(), subId, at + 30 * DAY)).expect(200);
      expect(paid.body).toMatchObject({ status: 'pending', reason_code: 'UNKNOWN_SUBSCRIPTION' });
      await send(sub({ id: subId, order: orderId, variant: VARIANT, at })).expect(200);
      const [row] = await t.sql<{ status: string }>('SELECT status FROM store_events WHERE id = $1', [paid.body.id]);
      expect(row.status).toBe('processed');
    });

    it('a quantity of 0 or a fraction: 500, failed INVALID_QUANTITY, no licence', async () => {
      for (const quantity of [0, 2.5]) {
        const subId = nextId();
        const res = await send(sub({ id: subId, order: nextId(), variant: VARIANT, at: now(), quantity })).expect(500);
        expect(res.body.error.details.reason_code).toBe('INVALID_QUANTITY');
        expect(await licenseOf(subId)).toBeUndefined();
      }
    });
  });
});
