import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../src/stores/stripe/stripe-store';
import { WebhooksService } from '../src/webhooks/webhooks.service';
import { fannedOut, setLicenseExpiry } from './support/factories';
import { startSmtpServer } from './support/smtp-server';
import { createTestApp, TestApp } from './support/test-app';

// A store purchase, signed as Stripe signs it, ends as a license_issued message in a real SMTP server (docs/mail.md, Stores).
jest.setTimeout(60_000);

const SECRET = 'whsec_mail_stores_e2e_0123456789';
const STRIPE_PORTAL = 'https://billing.stripe.com/p/login/test_mail_stores';
const DAY = 86_400;
type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;

/** invoice.paid for a new subscription at the pinned API version's paths (the price under a line's pricing). */
function firstInvoicePaid(subscription: string, price: string, email: string, name: string): string {
  const start = Math.floor(Date.now() / 1000);
  return stripeEvent(`evt_${subscription}`, 'invoice.paid', {
    id: `in_${subscription}`,
    object: 'invoice',
    billing_reason: 'subscription_create',
    customer: `cus_${subscription}`,
    customer_email: email,
    customer_name: name,
    livemode: true,
    parent: { type: 'subscription_details', subscription_details: { subscription, metadata: {} } },
    lines: {
      object: 'list',
      has_more: false,
      data: [
        {
          id: `il_${subscription}`,
          object: 'line_item',
          quantity: 1,
          period: { start, end: start + 30 * DAY },
          pricing: { type: 'price_details', price_details: { price, product: 'prod_x' }, unit_amount_decimal: '1000' },
          parent: {
            type: 'subscription_item_details',
            subscription_item_details: { subscription, subscription_item: 'si_1', proration: false },
          },
        },
      ],
    },
    payments: {
      object: 'list',
      has_more: false,
      data: [{ object: 'invoice_payment', payment: { type: 'payment_intent', payment_intent: `pi_${subscription}` } }],
    },
  });
}

/** customer.subscription.deleted: the subscription ended now. */
function subscriptionDeleted(subscription: string, price: string): string {
  const endedAt = Math.floor(Date.now() / 1000);
  return stripeEvent(`evt_${subscription}_end`, 'customer.subscription.deleted', {
    id: subscription,
    object: 'subscription',
    customer: `cus_${subscription}`,
    ended_at: endedAt,
    items: {
      object: 'list',
      has_more: false,
      data: [{ id: 'si_1', object: 'subscription_item', quantity: 1, price: { id: price, object: 'price' } }],
    },
  });
}

function stripeEvent(id: string, type: string, object: object): string {
  const created = Math.floor(Date.now() / 1000);
  const event = {
    id,
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created,
    livemode: true,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
  return JSON.stringify(event);
}

describe('customer e-mail from a store purchase (docs/mail.md, Stores)', () => {
  let t: TestApp;
  let smtp: Smtp;
  const sdk = new Stripe('sk_test_unused');

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      stores: { stripeWebhookSecret: SECRET, acceptTestEvents: false },
      mail: { smtpUrl: smtp.url, from: 'keys@vendor.example', brandName: 'Vendor Soft', disabledKinds: [], retryScheduleSeconds: [1] },
      portal: {
        enabled: true,
        loginLimit: 5,
        storePortalUrls: { stripe: STRIPE_PORTAL, paddle: 'https://customer-portal.paddle.com/cpl_x' },
      },
    });
    await t.admin
      .post('/api/v1/admin/store-plans')
      .send({ store: 'stripe', price_id: 'price_mail', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
      .expect(201);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const deliver = (body: string) =>
    t
      .http()
      .post('/api/v1/stores/stripe/events')
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', sdk.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }))
      .send(body);

  it('a Stripe purchase mails the buyer the new key, once, even when Stripe delivers the event twice', async () => {
    const body = firstInvoicePaid('sub_mail_1', 'price_mail', 'buyer@shop.example', 'Đorđe Petrović');
    expect((await deliver(body).expect(200)).body).toEqual(expect.objectContaining({ status: 'processed' }));
    await deliver(body).expect(200);

    const [license] = await t.sql<{ id: number; license_key: string }>(
      `SELECT id, license_key FROM licenses WHERE store_subscription_id = 'sub_mail_1'`,
    );
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes('buyer@shop.example'));
    expect(mail.parsed.subject).toBe('Your licence key for Retail Point of Sale');
    expect(mail.parsed.to && 'value' in mail.parsed.to ? mail.parsed.to.value : []).toEqual([
      { name: 'Đorđe Petrović', address: 'buyer@shop.example' },
    ]);
    expect(mail.parsed.text).toContain(license.license_key);
    expect(mail.parsed.html).toContain(license.license_key);
    // docs/mail.md, Links in the key mail: the portal (PUBLIC_URL + /portal, no token) and Stripe's own customer portal.
    expect(mail.parsed.text).toContain('at https://licences.example.test/portal (sign in with this e-mail address)');
    expect(mail.parsed.text).toContain(`Invoices, your payment method and your subscription: ${STRIPE_PORTAL}`);
    expect(mail.parsed.html).toContain(`href="https://licences.example.test/portal"`);
    expect(mail.parsed.html).toContain(`href="${STRIPE_PORTAL}"`);
    expect(mail.parsed.text).not.toMatch(/paddle|token=/);

    await fannedOut(t);
    const rows = await t.sql<{ kind: string; status: string; event_id: string }>(
      `SELECT kind, status, event_id FROM mail_messages WHERE license_id = $1`,
      [license.id],
    );
    // Derived from the purchase's own license.created event (recorded with actor type store), like every message.
    expect(rows).toEqual([expect.objectContaining({ kind: 'license_issued', event_id: expect.stringMatching(/^msg_/) })]);
    expect(await t.sql(`SELECT action, actor_type FROM audit_entries WHERE license_id = $1 ORDER BY id`, [license.id])).toEqual([
      { action: 'license.created', actor_type: 'store' },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(smtp.received.filter((m) => m.envelopeTo.includes('buyer@shop.example'))).toHaveLength(1);
  });

  it('no expiry reminder while the subscription is active (it renews); once it ended, reminders go out', async () => {
    await deliver(firstInvoicePaid('sub_mail_3', 'price_mail', 'renewer@shop.example', 'Renewer')).expect(200);
    const [license] = await t.sql<{ id: number }>(`SELECT id FROM licenses WHERE store_subscription_id = 'sub_mail_3'`);
    const store = async () => ((await t.admin.get(`/api/v1/admin/licenses/${license.id}`).expect(200)).body as { store: object }).store;
    expect(await store()).toEqual(expect.objectContaining({ subscription_id: 'sub_mail_3', subscription_active: true }));
    await smtp.waitFor(1, (m) => m.envelopeTo.includes('renewer@shop.example'));

    // Inside the reminder window while the subscription runs.
    await setLicenseExpiry(t, license.id, new Date(Date.now() + 2 * DAY * 1000), 0);
    await t.app.get(WebhooksService).scanExpiries();
    await fannedOut(t);
    // The scan did tell the event (its notice is taken); the fan-out wrote no mail for it.
    expect(await t.sql(`SELECT kind FROM webhook_expiry_notices WHERE license_id = $1`, [license.id])).toEqual([{ kind: 'expiring_soon' }]);
    expect(await t.sql(`SELECT kind FROM mail_messages WHERE license_id = $1 ORDER BY id`, [license.id])).toEqual([
      { kind: 'license_issued' },
    ]);

    // The subscription ends (on_end: expire): reminders for the licence's new end go out.
    await deliver(subscriptionDeleted('sub_mail_3', 'price_mail')).expect(200);
    expect(await store()).toEqual(expect.objectContaining({ subscription_active: false }));
    await setLicenseExpiry(t, license.id, new Date(Date.now() + 3 * DAY * 1000), 0);
    await t.app.get(WebhooksService).scanExpiries();
    const [reminder] = await smtp.waitFor(
      1,
      (m) => m.envelopeTo.includes('renewer@shop.example') && /expires on/.test(m.parsed.subject ?? ''),
    );
    expect(reminder.parsed.subject).toMatch(/^Your Retail Point of Sale licence expires on /);
  });

  it('a purchase without an e-mail address mails nothing', async () => {
    const body = firstInvoicePaid('sub_mail_2', 'price_mail', '', 'No Address');
    await deliver(body).expect(200);
    await fannedOut(t);
    const [license] = await t.sql<{ id: number }>(`SELECT id FROM licenses WHERE store_subscription_id = 'sub_mail_2'`);
    expect(await t.sql('SELECT id FROM mail_messages WHERE license_id = $1', [license.id])).toEqual([]);
  });
});
