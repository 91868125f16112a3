import { isProcessRunning } from '../../src/database/processes';
import { startReceiver } from '../support/webhook-receiver';
import { EmbeddedServer, embeddedServer, withDatabase } from './support/embedded-server';
import { jsonRequest, send } from './support/raw-http';
import { report } from './support/report';

const EVENTS = 500;
const WORKERS = 16;
/** Kill once this share of the burst's answers is in, with deliveries still queued and one being sent. */
const KILL_AFTER_SHARE = 0.4;
/** After the restart every event must reach the receiver within this (the dead process's claimed attempt waits out its 30 s lease). */
const DELIVERY_DEADLINE_MS = 75_000;

describe('crash safety: kill -9 in the middle of a burst of webhook events', () => {
  let s: EmbeddedServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    s = await embeddedServer({ WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  }, 90_000);

  afterAll(async () => {
    await s?.cleanup();
    await receiver?.close();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    send(s.server.port, jsonRequest(method, path, body, [['X-API-Key', s.apiKey]]));

  it('every committed event is delivered at least once after a restart, none is lost, none is invented', async () => {
    // A slow receiver that fails every fifth event's first attempt (so retries are pending at the kill too).
    const accepted = new Set<string>();
    const firstSeen = new Map<string, number>();
    receiver.respond(async (hook) => {
      const id = String(hook.headers['webhook-id']);
      if (!firstSeen.has(id)) firstSeen.set(id, firstSeen.size);
      await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 25)));
      const firstAttempt = receiver.received.filter((h) => h.headers['webhook-id'] === id).length === 1;
      if (firstAttempt && (firstSeen.get(id) as number) % 5 === 0) return 500;
      accepted.add(id);
      return 204;
    });
    const created = await admin('POST', '/api/v1/admin/webhooks', { url: receiver.url, events: ['license.created'] });
    expect(created.status).toBe(201);

    // The burst: 500 licence creations, each an event; the server is killed in the middle, clients that lost their
    // answer try again once it is back (a cut-off creation may have committed: the database says what exists).
    let answered = 0;
    let restarted: Promise<unknown> | undefined;
    let killedAtDeliveries = 0;
    const queue = Array.from({ length: EVENTS }, (_, i) => i);
    const worker = async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const body = { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: `Hook crash ${i}` };
        for (;;) {
          const res = await admin('POST', '/api/v1/admin/licenses', body).catch(() => undefined);
          if (res?.status === 201) break;
          if (res && res.status !== 503) throw new Error(`licence creation: ${res.status} ${res.body}`);
          await restarted;
        }
        answered++;
        // Past the share and once a delivery has landed (a busy machine may start delivering late): mid-delivery.
        if (!restarted && answered >= EVENTS * KILL_AFTER_SHARE && accepted.size > 0) {
          killedAtDeliveries = accepted.size;
          restarted = s.server.stop('SIGKILL').then(() => s.start());
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    await restarted;
    expect(isProcessRunning(s.server.pid)).toBe(true);

    const committed = () =>
      withDatabase(s.databaseUrl(), async (c) => {
        const events = await c.query<{ id: string }>(`SELECT id FROM event_outbox WHERE type = 'license.created'`);
        const unevented = await c.query<{ id: number }>(
          `SELECT l.id FROM licenses l WHERE NOT EXISTS (SELECT 1 FROM event_outbox e WHERE e.type = 'license.created' AND (e.payload->'data'->>'id')::int = l.id)`,
        );
        const statuses = await c.query<{ status: string; n: number }>(
          `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`,
        );
        return {
          ids: events.rows.map((r) => r.id),
          unevented: unevented.rows.length,
          statuses: Object.fromEntries(statuses.rows.map((r) => [r.status, r.n])),
        };
      });

    const started = Date.now();
    let db = await committed();
    while (Date.now() - started < DELIVERY_DEADLINE_MS && !(db.ids.every((id) => accepted.has(id)) && !db.statuses.pending)) {
      await new Promise((r) => setTimeout(r, 500));
      db = await committed();
    }
    const missing = db.ids.filter((id) => !accepted.has(id));
    const invented = [...accepted].filter((id) => !db.ids.includes(id));
    const received = receiver.received.map((h) => String(h.headers['webhook-id']));
    report('webhook-crash-safety', {
      licence_creations_answered: answered,
      events_committed: db.ids.length,
      delivered_before_kill: killedAtDeliveries,
      distinct_webhook_ids_accepted: accepted.size,
      requests_received: received.length,
      duplicate_requests: received.length - new Set(received).size,
      deliveries_by_status: db.statuses,
      seconds_to_deliver_all_after_restart: Math.round((Date.now() - started) / 1000),
    });
    // The kill landed in the middle of delivery: some before it, most after.
    expect(killedAtDeliveries).toBeGreaterThan(0);
    expect(killedAtDeliveries).toBeLessThan(db.ids.length);
    expect(db.ids.length).toBeGreaterThanOrEqual(EVENTS);
    expect(db.unevented).toBe(0);
    expect(missing).toEqual([]);
    expect(invented).toEqual([]);
    expect(db.statuses).toEqual({ delivered: db.ids.length });
  }, 150_000);
});
