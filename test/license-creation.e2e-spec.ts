import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../src/stores/stripe/stripe-store';
import { Agent, loggedInAgent, postForm } from './dashboard-helpers';
import { EventFanoutService } from '../src/events/event-fanout.service';
import { fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const SECRET = 'whsec_license_creation_0123456789abcdef';
const DAY = 86_400;

/**
 * One licence-creation use case for every door (docs/licences.md, Creating): the admin API, the dashboard, a store and a
 * trial create through LicenseCreation, so their events carry the same details (docs/webhooks.md, Event catalogue).
 */
describe('a licence created through each door', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({
      stores: { stripeWebhookSecret: SECRET, stripeApiKey: 'sk_test_unused', acceptTestEvents: false },
    });
    await t.app.listen(0);
    // The test reads each creation's event in the outbox; the background fan-out would drop it (no endpoint takes it)
    // as soon as 0.2 s later, which a busy machine gave it once. Stopped, the events stay for the reads.
    await t.app.get(EventFanoutService).stop();
    const session = await loggedInAgent(t);
    agent = session.agent;
    token = await session.token();
    await t.admin
      .post('/api/v1/admin/store-plans')
      .send({ store: 'stripe', price_id: 'price_doors', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' })
      .expect(201);
    const [pos] = await t.sql<{ id: number }>("SELECT id FROM products WHERE code = 'POS_RETAIL'");
    await t.admin
      .put(`/api/v1/admin/products/${pos.id}`)
      .send({ trial: { days: 14 } })
      .expect(200);
  }, 60_000);
  afterAll(() => t.close());

  const createdEvent = async (licenseId: number, action: string) => {
    const [entry] = await t.sql<{ details: Record<string, unknown> }>(
      'SELECT details FROM audit_entries WHERE license_id = $1 AND action = $2',
      [licenseId, action],
    );
    const [event] = await t.sql<{ payload: { data: { event: { details: Record<string, unknown> } } } }>(
      'SELECT payload FROM event_outbox WHERE license_id = $1 AND type = $2',
      [licenseId, action],
    );
    // The audit entry and the webhook carry the same details.
    expect(event.payload.data.event.details).toEqual(entry.details);
    return entry.details;
  };
  const idOfKey = async (key: string) => (await t.sql<{ id: number }>('SELECT id FROM licenses WHERE license_key = $1', [key]))[0].id;

  async function throughAdminApi() {
    const res = await t.admin
      .post('/api/v1/admin/licenses')
      .send({ product_code: 'POS_RETAIL', license_type: 'MONTHLY', customer_name: 'Api d.o.o.', customer_email: 'api@example.rs' })
      .expect(201);
    return createdEvent(res.body.id as number, 'license.created');
  }

  async function throughDashboard() {
    const res = await postForm(agent, token, '/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'MONTHLY',
      customer_name: 'Dashboard d.o.o.',
      customer_email: 'dash@example.rs',
      grace_days: '7',
    }).expect(303);
    const id = Number(/\/licenses\/(\d+)/.exec(res.headers.location)?.[1]);
    return createdEvent(id, 'license.created');
  }

  async function throughStore() {
    const start = Math.floor(Date.now() / 1000);
    const subscription = `sub_doors_${Date.now().toString(36)}`;
    const event = {
      id: `evt_doors_${Date.now().toString(36)}`,
      object: 'event',
      api_version: STRIPE_API_VERSION,
      created: start,
      livemode: true,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type: 'invoice.paid',
      data: {
        object: {
          id: `in_doors_${Date.now().toString(36)}`,
          object: 'invoice',
          billing_reason: 'subscription_create',
          customer: 'cus_doors',
          customer_email: 'store@example.rs',
          customer_name: 'Store d.o.o.',
          livemode: true,
          parent: { type: 'subscription_details', subscription_details: { subscription, metadata: {} } },
          lines: {
            object: 'list',
            has_more: false,
            data: [
              {
                id: 'il_doors',
                object: 'line_item',
                quantity: 1,
                period: { start, end: start + 30 * DAY },
                pricing: { type: 'price_details', price_details: { price: 'price_doors', product: 'prod_x' }, unit_amount_decimal: '1000' },
              },
            ],
          },
        },
      },
    };
    const body = JSON.stringify(event);
    const signature = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
    await t
      .http()
      .post('/api/v1/stores/stripe/events')
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', signature)
      .send(body)
      .expect(200);
    const [row] = await t.sql<{ id: number }>('SELECT id FROM licenses WHERE store_subscription_id = $1', [subscription]);
    return createdEvent(row.id, 'license.created');
  }

  async function throughTrial() {
    const res = await t
      .http()
      .post('/api/v1/trials')
      .send({ product: 'POS_RETAIL', machine_fingerprint: fingerprint('doors-trial'), hostname: 'till-1' })
      .expect(201);
    return createdEvent(await idOfKey(res.body.license.license_key as string), 'license.trial_started');
  }

  const CREATION_KEYS = [
    'customer_name',
    'expires_at',
    'features',
    'grace_days',
    'license_type',
    'limits',
    'notify_customer',
    'policy',
    'store',
    'subscription_id',
  ];

  it('every door records the same creation details (the trial adds its machine)', async () => {
    const doors = {
      api: await throughAdminApi(),
      dashboard: await throughDashboard(),
      store: await throughStore(),
      trial: await throughTrial(),
    };
    for (const details of [doors.api, doors.dashboard, doors.store]) expect(Object.keys(details).sort()).toEqual(CREATION_KEYS);
    expect(Object.keys(doors.trial).sort()).toEqual(
      [...CREATION_KEYS, 'app_version', 'days', 'hostname', 'machine_fingerprint', 'os'].sort(),
    );
    // The values say where each came from, in the same words.
    expect(doors.api).toMatchObject({ customer_name: 'Api d.o.o.', store: null, subscription_id: null, notify_customer: false });
    expect(doors.dashboard).toMatchObject({ customer_name: 'Dashboard d.o.o.', grace_days: 7, store: null, notify_customer: false });
    expect(doors.store).toMatchObject({ customer_name: 'Store d.o.o.', store: 'stripe', notify_customer: true });
    expect(doors.store.subscription_id).toMatch(/^sub_doors_/);
    expect(doors.trial).toMatchObject({ customer_name: 'till-1', license_type: 'TRIAL', store: null, notify_customer: false, days: 14 });
  });
});
