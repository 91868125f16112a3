import { STRIPE_API_VERSION } from '../src/stores/stripe/stripe-store';
import { loggedInAgent } from './dashboard-helpers';
import { createTestApp, TestApp } from './support/test-app';

type EventBody = { id: string; status: string; replayed_at: string | null };

/**
 * `replayed_at` in the store-event answers (docs/stores.md, Needs attention): null until staff replay the event, then
 * the time of the last replay, in the list, the filtered list and the replay's own answer. Also the statistics page's
 * count of events needing attention, in the singular for one.
 */
describe('replayed_at of store events', () => {
  let t: TestApp;

  /** An ignored invoice.paid for a price no plan sells (NO_PLAN), written straight into the ledger. */
  async function noPlanEvent(eventId: string): Promise<string> {
    const start = Math.floor(Date.now() / 1000);
    const payload = {
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
          customer: 'cus_replayed',
          customer_email: 'replayed@shop.example',
          parent: { type: 'subscription_details', subscription_details: { subscription: `sub_${eventId}` } },
          lines: {
            object: 'list',
            data: [
              {
                id: `il_${eventId}`,
                quantity: 1,
                period: { start, end: start + 30 * 86_400 },
                pricing: { price_details: { price: 'price_nowhere' } },
              },
            ],
          },
        },
      },
    };
    const [{ id }] = await t.sql<{ id: string }>(
      `INSERT INTO store_events (store, event_id, type, status, reason_code, error, payload)
       VALUES ('stripe', $1, 'invoice.paid', 'ignored', 'NO_PLAN', 'no plan', $2) RETURNING id::text AS id`,
      [eventId, JSON.stringify(payload)],
    );
    return id;
  }

  const listed = async (query = '') => (await t.admin.get(`/api/v1/admin/store-events?limit=100${query}`).expect(200)).body as EventBody[];

  beforeAll(async () => {
    t = await createTestApp({ stores: { stripeWebhookSecret: 'whsec_replayed_0123456789', acceptTestEvents: false } });
  }, 60_000);
  afterAll(() => t?.close(), 60_000);

  it('is null for an event never replayed, and the time of the replay after one (in the answer and the lists)', async () => {
    const id = await noPlanEvent('evt_replayed_1');
    expect((await listed()).find((e) => e.id === id)).toMatchObject({ id, replayed_at: null });
    expect((await listed('&needs_attention=true')).find((e) => e.id === id)).toMatchObject({ replayed_at: null });

    const before = Date.now();
    const replayed = (await t.admin.post(`/api/v1/admin/store-events/${id}/replay`).expect(200)).body as EventBody;
    expect(replayed).toMatchObject({ id, status: 'ignored' });
    expect(replayed.replayed_at).not.toBeNull();
    expect(Date.parse(replayed.replayed_at as string)).toBeGreaterThanOrEqual(before - 5_000);
    const [{ at }] = await t.sql<{ at: Date }>('SELECT replayed_at AS at FROM store_events WHERE id = $1', [id]);
    expect(replayed.replayed_at).toBe(at.toISOString());
    expect((await listed('&needs_attention=false')).find((e) => e.id === id)).toMatchObject({ replayed_at: at.toISOString() });
  });

  it('the statistics page says "1 store event needs attention" for one and "2 store events need attention" for two', async () => {
    await t.sql(`DELETE FROM store_events`);
    const { agent } = await loggedInAgent(t);
    const count = async () => {
      const html = (await agent.get('/dashboard').expect(200)).text;
      return /data-testid="store-attention">([\s\S]*?)<\/div><\/div>/
        .exec(html)?.[1]
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
    };
    await noPlanEvent('evt_plural_1');
    expect(await count()).toBe('1 store event needs attention');
    await noPlanEvent('evt_plural_2');
    expect(await count()).toBe('2 store events need attention');
  });
});
