import type { PoolClient } from 'pg';
import { pgPool } from '../../src/database/pg-pool';
import { EventFanoutService, FANOUT_POLL_MS } from '../../src/events/event-fanout.service';
import { KeyringService } from '../../src/keyring/keyring.service';
import type { TestApp } from './test-app';

/** Statements the app's pool sent while some work ran. */
export interface RoundTrips {
  count: number;
  statements: string[];
}

/**
 * Where a statement of the app's own background work comes from: a job engine handler (the seat sweep, the expiry
 * scan, the statistics fold, the mail and webhook sweeps, all run from src/jobs/) or the event fan-out's poller. Their
 * frames are in the statement's (async) stack; a request's statements have none of them.
 */
const BACKGROUND_FRAME = /[\\/]src[\\/](jobs[\\/]|events[\\/]event-fanout)|[\\/]node_modules[\\/]pg-boss[\\/]/;

/** The statement's caller chain, deep enough to reach the job handler or poller behind TypeORM's frames. */
function callerStack(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 80;
  try {
    return new Error().stack ?? '';
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Counts the PostgreSQL round trips of the app's pool (docs/performance.md): every client the pool hands out is
 * wrapped once. Only the work's own statements count (docs/testing.md, On a busy machine): while it runs, the app's
 * pollers are stopped (the event fan-out, every 200 ms; the keyring's refresh), and of the job engine's schedules
 * (minutes apart, or 15 s for the seat sweep) a pass that lands inside one run is outvoted: `roundTrips(work)` runs
 * `work` three times and keeps the least; `roundTrips(work, 1)` runs it once (work that cannot be repeated).
 */
export function watchRoundTrips(t: TestApp): (work: (run: number) => Promise<unknown>, runs?: number) => Promise<RoundTrips> {
  let counting = false;
  let statements: string[] = [];
  const pool = pgPool(t.dataSource);
  if (!pool) throw new Error('no pool');
  const wrapped = new WeakSet<PoolClient>();
  pool.on('acquire', (client: PoolClient) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      if (counting && !BACKGROUND_FRAME.test(callerStack())) statements.push(typeof first === 'string' ? first : first.text);
      return query(...args);
    };
  });
  const fanout = t.app.get(EventFanoutService);
  const keyring = t.app.get(KeyringService);
  return async (work, runs = 3) => {
    let best: RoundTrips | undefined;
    await fanout.stop();
    keyring.stopRefresh();
    try {
      for (let run = 0; run < runs; run++) {
        statements = [];
        counting = true;
        try {
          await work(run);
        } finally {
          counting = false;
        }
        if (!best || statements.length < best.count) best = { count: statements.length, statements };
      }
    } finally {
      keyring.startRefresh();
      // As if the poller had run on: its next pass one interval later.
      fanout.start(FANOUT_POLL_MS);
    }
    return best as RoundTrips;
  };
}
