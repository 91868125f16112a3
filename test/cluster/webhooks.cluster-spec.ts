import { startServer, ServerProcess } from '../support/server-process';
import { startReceiver } from '../support/webhook-receiver';
import { ClusterEnv, createClusterEnv } from './cluster-env';

const EVENTS = 500;
const WORKERS = 10;

/**
 * Two instances deliver one outbox: every event arrives, and no attempt is ever in flight twice at once (docs/webhooks.md, Delivery, retries and "at least once").
 * The receiver answers 2xx after a short delay, so each event should arrive exactly once.
 */
describe('webhooks on two instances', () => {
  let cluster: ClusterEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const METRICS_TOKEN = 'cluster-metrics-token-0123456789';

  beforeAll(async () => {
    receiver = await startReceiver();
    cluster = await createClusterEnv({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '1,1,1', METRICS_TOKEN });
    a = await startServer(cluster.env);
    b = await startServer(cluster.env);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.cleanup();
    await receiver?.close();
  });

  const post = (server: ServerProcess, path: string, body: unknown) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': cluster.apiKey },
      body: JSON.stringify(body),
    });
  const deliveredBy = async (server: ServerProcess) => {
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    return Number(/^webhook_delivery_attempts_total\{outcome="delivered"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };

  it('500 events created on both instances are each delivered, exactly once, never two attempts at once', async () => {
    const inFlight = new Map<string, number>();
    let maxInFlight = 0;
    receiver.respond(async (hook) => {
      const id = String(hook.headers['webhook-id']);
      const now = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, now);
      maxInFlight = Math.max(maxInFlight, now);
      await new Promise((r) => setTimeout(r, 10 + Math.floor(Math.random() * 40)));
      inFlight.set(id, (inFlight.get(id) as number) - 1);
      return 200;
    });
    const created = await post(a, '/api/v1/admin/webhooks', { url: receiver.url, events: ['license.created'] });
    expect(created.status).toBe(201);

    const queue = Array.from({ length: EVENTS }, (_, i) => i);
    const worker = async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const res = await post(i % 2 ? b : a, '/api/v1/admin/licenses', {
          product_code: 'POS_RETAIL',
          license_type: 'YEARLY',
          customer_name: `Cluster hook ${i}`,
        });
        if (res.status !== 201) throw new Error(`licence creation: ${res.status} ${await res.text()}`);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));

    const hooks = await receiver.waitFor(EVENTS, () => true, 90_000);
    // A little longer: a second copy of any event would arrive now.
    await new Promise((r) => setTimeout(r, 2_000));
    const perId = new Map<string, number>();
    for (const h of receiver.received) perId.set(String(h.headers['webhook-id']), (perId.get(String(h.headers['webhook-id'])) ?? 0) + 1);
    const types = new Set(hooks.map((h) => (JSON.parse(h.body) as { type: string }).type));
    const [byA, byB] = await Promise.all([deliveredBy(a), deliveredBy(b)]);
    console.log(
      `[cluster:webhooks] received ${receiver.received.length}, distinct ${perId.size}, by a ${byA}, by b ${byB}, max in flight ${maxInFlight}`,
    );

    expect(types).toEqual(new Set(['license.created']));
    expect(perId.size).toBe(EVENTS);
    expect(maxInFlight).toBe(1);
    expect([...perId.values()].filter((n) => n !== 1)).toEqual([]);
    expect(byA + byB).toBe(EVENTS);
    // Both instances took part.
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
  }, 170_000);
});
