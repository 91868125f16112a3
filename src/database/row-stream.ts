import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { Pool } from 'pg';
import QueryStream from 'pg-query-stream';
import type { DataSource } from 'typeorm';
import { pgPool } from './pg-pool';
import type { Sql } from './statement';

/** The pg pool behind the app's DataSource, through the one seam (pg-pool.ts); the data source must be initialised. */
export function poolOf(dataSource: DataSource): Pool {
  const pool = pgPool(dataSource);
  if (!pool) throw new Error('row stream before the data source was initialised');
  return pool;
}

/** Rows fetched per round trip; also the stream's buffer, so memory stays at one batch whatever the total. */
const BATCH_ROWS = 500;
/** A reader that stops reading for this long loses its export (and its connection goes back to the pool). */
const STALLED_READER_MS = 120_000;

/**
 * The rows of `statement` (built with the `sql` tag) as an object stream read from a server-side cursor, one batch at a time and only as
 * fast as the reader takes them (back-pressure). It runs in its own read-only REPEATABLE READ transaction on
 * a pool connection, without the pool's 15 s statement_timeout (an export of a million rows takes longer) but
 * with an idle timeout for a stalled reader. The promise resolves once the first row (or the end) is there,
 * so a failure before any data is an ordinary error. When the stream ends, fails or is destroyed (a client
 * that hangs up), the connection is released: destroyed when the cursor did not finish, so the server ends
 * the query at once.
 */
export async function openRowStream(dataSource: DataSource, statement: Sql): Promise<Readable> {
  const { text, values } = statement.compile();
  const client = await poolOf(dataSource).connect();
  // While checked out the pool does not listen for errors; a dropped connection must not crash the process.
  const ignoreError = () => undefined;
  client.on('error', ignoreError);
  let released = false;
  const release = (err?: Error) => {
    if (released) return;
    released = true;
    client.removeListener('error', ignoreError);
    client.release(err);
  };
  let rows: QueryStream;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${STALLED_READER_MS}`);
    rows = client.query(new QueryStream(text, values, { batchSize: BATCH_ROWS, highWaterMark: BATCH_ROWS }));
    await once(rows, 'readable');
  } catch (err) {
    release(err as Error);
    throw err;
  }
  let ended = false;
  rows.once('end', () => {
    ended = true;
    client.query('COMMIT').then(
      () => release(),
      (err: Error) => release(err),
    );
  });
  rows.once('error', (err) => release(err));
  rows.once('close', () => {
    if (!ended) release(new Error('export stopped before its end'));
  });
  return rows;
}
