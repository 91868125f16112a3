import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { type CpuMeter, cpuTally } from './cpu';

/** Delivery lag of webhooks (from the event's `timestamp` to its receipt), measured under a load. */
export interface WebhookLag {
  delivered: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Seconds from the end of the load until nothing was pending any more (the backlog the load left). */
  drainSeconds: number;
  /** Deliveries still pending when the bench stopped waiting. */
  pendingAfterWait: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;

/** Deliveries created for one endpoint, in all and by event type. */
export interface WebhookDeliveries {
  created: number;
  byType: Record<string, number>;
}

export interface LagReceiver {
  url: string;
  /** Per webhook received: receipt − the body's `timestamp`, in ms. */
  lags: number[];
  /** Requests whose `webhook-id` had come before (a repeated delivery; each is in `lags` too). */
  repeats: () => number;
  close: () => Promise<void>;
}

/**
 * A receiver in the bench process that answers 204 at once and keeps, per request, now − the body's `timestamp`:
 * the event's time, taken by the server as it writes the event in the transaction of the change, just before its
 * commit (docs/webhooks.md, The event spine); same machine, same clock. So the lag spans the commit, the fan-out's
 * poll, the delivery queue and the POST.
 */
export async function startLagReceiver(): Promise<LagReceiver> {
  const lags: number[] = [];
  const ids = new Set<string>();
  let repeats = 0;
  const server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    if (ids.has(id)) repeats++;
    else ids.add(id);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const receivedAt = Date.now();
      try {
        const { timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
        lags.push(receivedAt - Date.parse(timestamp));
      } catch {
        // not a webhook: ignore
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    lags,
    repeats: () => repeats,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Counts the pending deliveries every `everyMs` until none is left or `deadline` (epoch ms) has passed, calling
 * `onWait` after each pause; returns the last count. The count runs on a backend of the measured database.
 */
async function untilNonePending(pool: Pool, deadline: number, everyMs: number, onWait?: () => void): Promise<number> {
  for (;;) {
    const pending = Number(
      (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`)).rows[0].n,
    );
    if (pending === 0 || Date.now() >= deadline) return pending;
    await sleep(everyMs);
    onWait?.();
  }
}

/** Waits (at most `maxSeconds`) until no delivery is pending, then summarises the lags. */
export async function settleLag(pool: Pool, lags: number[], maxSeconds = 120): Promise<WebhookLag> {
  const started = Date.now();
  const pending = await untilNonePending(pool, started + maxSeconds * 1000, 250);
  const sorted = [...lags].sort((a, b) => a - b);
  return {
    delivered: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
    drainSeconds: Math.round((Date.now() - started) / 100) / 10,
    pendingAfterWait: pending,
  };
}

/**
 * Waits (at most `maxSeconds`) until no event is waiting for its fan-out, then counts the deliveries created for
 * endpoint `endpointId`, by event type. Events the server's scheduled work records as the system (the expiry scan's
 * license.expiring_soon and license.expired, the seat sweep's releases) are not counted: they come whatever the load
 * does, whenever their schedule falls inside a row.
 */
export async function deliveriesFor(pool: Pool, endpointId: number, maxSeconds = 30): Promise<WebhookDeliveries> {
  const started = Date.now();
  while (Date.now() - started < maxSeconds * 1000) {
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM event_outbox WHERE fanned_out_at IS NULL');
    if (Number(rows[0].n) === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const { rows } = await pool.query<{ type: string; n: string }>(
    `SELECT e.type, count(*) AS n FROM webhook_deliveries d JOIN event_outbox e ON e.id = d.event_id
      WHERE d.endpoint_id = $1 AND e.payload->'data'->'event'->>'actor_type' IS DISTINCT FROM 'system'
      GROUP BY e.type ORDER BY e.type`,
    [endpointId],
  );
  const byType = Object.fromEntries(rows.map((r) => [r.type, Number(r.n)]));
  return { created: rows.reduce((sum, r) => sum + Number(r.n), 0), byType };
}

/** The delivery pipeline's capacity: a backlog of events handed to the fan-out at once, timed until the last receipt. */
export interface DeliveryCapacity {
  events: number;
  /** From the events' write until the receiver had them all. */
  seconds: number;
  /** From the events' write until every outcome was recorded (no delivery pending). */
  recordedSeconds: number;
  /** Deliveries per second of one instance (fan-out, claim, sign, POST, record) to a receiver answering 204 at once. */
  perSecond: number;
  /** Fresh activations per second at saturation in the same run (the `activate` row), when it ran. */
  producedPerSecond?: number;
  /** perSecond ÷ producedPerSecond: at least 1.5 for deliveries to keep up with a saturated server (issue 60). */
  ratio?: number;
  /** Server process tree CPU per delivery until every outcome was recorded, µs. */
  serverUs?: number;
  /** Its PostgreSQL backends' CPU per delivery, µs. */
  databaseUs?: number;
  /** Deliveries still pending when the bench stopped waiting. */
  pendingAfterWait: number;
  /** Requests the receiver had had before (same `webhook-id`): none while nothing fails. */
  repeated: number;
}

/**
 * Writes `events` license.activated events to the outbox in one statement (each with a licence's row as its data,
 * about the size of a real activation's body), as if that many activations had just committed, and times their
 * fan-out and delivery until the receiver has them all. The endpoint must exist already (it takes no older event).
 */
export async function measureDeliveryCapacity(
  pool: Pool,
  receiver: LagReceiver,
  events: number,
  meters: { server: CpuMeter; database: CpuMeter },
  maxSeconds = 300,
): Promise<DeliveryCapacity> {
  const [received, repeated] = [receiver.lags.length, receiver.repeats()];
  // Only the database's tally is sampled while the row runs: its backends come and go with the pool, while the server
  // (one process in this row) is still there for the last reading.
  const [server, database] = [cpuTally(meters.server), cpuTally(meters.database)];
  const started = Date.now();
  const deadline = started + maxSeconds * 1000;
  await pool.query(
    `INSERT INTO event_outbox (id, type, payload, license_id, product_id)
     SELECT 'msg_' || md5(random()::text || g), 'license.activated',
       jsonb_build_object('type', 'license.activated', 'timestamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         'data', to_jsonb(l) - 'search_text'),
       l.id, l.product_id
     FROM generate_series(1, $1::int) g JOIN licenses l ON l.id = 1 + g % (SELECT max(id) FROM licenses)`,
    [events],
  );
  for (let polls = 1; receiver.lags.length - received < events && Date.now() < deadline; polls++) {
    await sleep(20);
    // Every 0.2 s: a backend that exits before the end keeps what it used up to here.
    if (polls % 10 === 0) database.sample();
  }
  const seconds = (Date.now() - started) / 1000;
  const delivered = receiver.lags.length - received;
  // Then until every outcome is written (a drain records its outcomes in batches behind the sends), every 0.1 s (the
  // count's own backend is in the PostgreSQL CPU too).
  const pending = await untilNonePending(pool, deadline, 100, () => database.sample());
  const [serverUs, databaseUs] = [server, database].map((tally) => {
    const used = tally.usedUs();
    return used === undefined ? undefined : Math.round(used / Math.max(1, delivered));
  });
  return {
    events,
    seconds: Math.round(seconds * 100) / 100,
    recordedSeconds: Math.round(((Date.now() - started) / 1000) * 100) / 100,
    perSecond: Math.round(delivered / seconds),
    serverUs,
    databaseUs,
    pendingAfterWait: pending,
    repeated: receiver.repeats() - repeated,
  };
}
