import { Client } from 'pg';
import Stripe from 'stripe';
import { STRIPE_API_VERSION } from '../../src/stores/stripe/stripe-store';
import { startServer, ServerProcess } from '../support/server-process';
import { ClusterEnv, createClusterEnv } from './cluster-env';

const SUBSCRIPTIONS = 250;
const WORKERS = 16;
const SECRET = 'whsec_cluster_0123456789abcdef';
const DAY = 86_400;

/**
 * A burst of 500 Stripe events (a purchase and a renewal of 250 subscriptions), each delivered to BOTH instances at
 * once: every event is applied exactly once (docs/stores.md, The ledger).
 */
describe('stores on two instances', () => {
  let cluster: ClusterEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  const sdk = new Stripe('sk_test_unused');

  beforeAll(async () => {
    // 1,000 deliveries from one address: past the store routes' per-IP limit (RATE_LIMIT_STORES, 600 a minute), so raised.
    cluster = await createClusterEnv({ STRIPE_WEBHOOK_SECRET: SECRET, RATE_LIMIT_STORES: '100000' });
    a = await startServer(cluster.env);
    b = await startServer(cluster.env);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.cleanup();
  });

  const invoiceEvent = (sub: number, reason: 'subscription_create' | 'subscription_cycle', start: number): Stripe.Event => {
    const invoice = {
      id: `in_${reason}_${sub}`,
      object: 'invoice',
      billing_reason: reason,
      customer: `cus_${sub}`,
      customer_email: `buyer${sub}@example.com`,
      customer_name: `Buyer ${sub}`,
      parent: { type: 'subscription_details', subscription_details: { subscription: `sub_cluster_${sub}` } },
      lines: {
        object: 'list',
        data: [
          {
            id: `il_${reason}_${sub}`,
            object: 'line_item',
            quantity: 1,
            period: { start, end: start + 30 * DAY },
            pricing: { type: 'price_details', price_details: { price: 'price_cluster', product: 'prod_x' } },
          },
        ],
      },
    } satisfies Partial<Record<keyof Stripe.Invoice, unknown>>;
    return {
      id: `evt_${reason}_${sub}`,
      object: 'event',
      api_version: STRIPE_API_VERSION,
      created: start,
      livemode: true,
      type: 'invoice.paid',
      data: { object: invoice },
    } as unknown as Stripe.Event;
  };

  const deliver = async (server: ServerProcess, event: Stripe.Event) => {
    const body = JSON.stringify(event);
    const res = await fetch(`${server.url}/api/v1/stores/stripe/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': sdk.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }),
      },
      body,
    });
    if (res.status !== 200) throw new Error(`${event.id} on ${server.url}: ${res.status} ${await res.text()}`);
  };

  /** Each event to both instances at the same moment, WORKERS events at a time. */
  const burst = async (events: Stripe.Event[]) => {
    const queue = [...events];
    const worker = async () => {
      for (let e = queue.shift(); e !== undefined; e = queue.shift()) await Promise.all([deliver(a, e), deliver(b, e)]);
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
  };

  it('500 events, each delivered to both instances at once, are each applied exactly once', async () => {
    const plan = await fetch(`${a.url}/api/v1/admin/store-plans`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': cluster.apiKey },
      body: JSON.stringify({
        store: 'stripe',
        price_id: 'price_cluster',
        product_code: 'POS_RETAIL',
        license_type: 'MONTHLY',
        on_end: 'expire',
      }),
    });
    expect(plan.status).toBe(201);
    const start = Math.floor(Date.now() / 1000);
    const subs = Array.from({ length: SUBSCRIPTIONS }, (_, i) => i);
    await burst(subs.map((i) => invoiceEvent(i, 'subscription_create', start)));
    await burst(subs.map((i) => invoiceEvent(i, 'subscription_cycle', start + 30 * DAY)));

    const db = new Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    try {
      const events = await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM store_events GROUP BY status`);
      expect(events.rows).toEqual([{ status: 'processed', n: 2 * SUBSCRIPTIONS }]);
      const licences = await db.query<{ expires_at: Date; audits: number; created: number }>(
        `SELECT l.expires_at, (SELECT count(*)::int FROM audit_entries a WHERE a.license_id = l.id) AS audits,
                (SELECT count(*)::int FROM audit_entries a WHERE a.license_id = l.id AND a.action = 'license.created') AS created
           FROM licenses l WHERE l.store_name = 'stripe'`,
      );
      expect(licences.rows).toHaveLength(SUBSCRIPTIONS);
      const renewedEnd = new Date((start + 60 * DAY) * 1000).toISOString();
      expect(licences.rows.filter((l) => l.expires_at.toISOString() !== renewedEnd)).toEqual([]);
      // One licence.created (the purchase) and one licence.updated (the renewal) per licence, whoever got there first.
      expect(licences.rows.filter((l) => l.audits !== 2 || l.created !== 1)).toEqual([]);
    } finally {
      await db.end();
    }
  });
});
