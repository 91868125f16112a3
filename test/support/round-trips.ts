import type { PoolClient } from 'pg';
import { pgPool } from '../../src/database/pg-pool';
import type { TestApp } from './test-app';

/** Statements the app's pool sent while some work ran. */
export interface RoundTrips {
  count: number;
  statements: string[];
}

/**
 * Counts the PostgreSQL round trips of the app's pool (docs/performance.md): every client the pool hands out is
 * wrapped once. `roundTrips(work)` runs `work` three times and keeps the least, so a background job's query cannot
 * add to it; `roundTrips(work, 1)` runs it once (work that cannot be repeated).
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
  return async (work, runs = 3) => {
    let best: RoundTrips | undefined;
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
    return best as RoundTrips;
  };
}
