import type { PoolClient } from 'pg';
import { pgPool } from '../../src/database/pg-pool';
import { EventFanoutService, FANOUT_POLL_MS } from '../../src/events/event-fanout.service';
import { JobsService } from '../../src/jobs/jobs.service';
import { KeyringService } from '../../src/keyring/keyring.service';
import type { TestApp } from './test-app';

/** Statements the app's pool sent while some work ran. */
export interface RoundTrips {
  count: number;
  statements: string[];
}

/**
 * Counts the PostgreSQL round trips of the app's pool (docs/performance.md): every client the pool hands out is
 * wrapped once. Only the work's own statements count (docs/testing.md, On a busy machine): while it runs, the app's
 * background work is held: the event fan-out's poller and the keyring's refresh are stopped, and the job engine's
 * handlers (the sweeps, scans, folds, mail and webhook drains) wait until the count is done. `roundTrips(work)` runs
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
      if (counting) statements.push(typeof first === 'string' ? first : first.text);
      return query(...args);
    };
  });
  const fanout = t.app.get(EventFanoutService);
  const keyring = t.app.get(KeyringService);
  const jobs = t.app.get(JobsService);
  return async (work, runs = 3) => {
    let best: RoundTrips | undefined;
    await fanout.stop();
    keyring.stopRefresh();
    await jobs.holdHandlers();
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
      jobs.releaseHandlers();
      keyring.startRefresh();
      // As if the poller had run on: its next pass one interval later.
      fanout.start(FANOUT_POLL_MS);
    }
    return best as RoundTrips;
  };
}
