import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { EntityManager, QueryFailedError } from 'typeorm';
import { pgPool } from './pg-pool';

/**
 * Runs `text` as a named prepared statement on PostgreSQL: parsed and planned once per connection
 * instead of on every call. For the client API's per-request queries this matters: planning the
 * validate join cost four times the CPU of executing it. Inside a transaction (a manager from
 * DataSource.transaction) it runs on the transaction's connection, otherwise on the pool.
 * `name` identifies the statement text: one name per distinct text, never reused for another.
 * Errors come wrapped like TypeORM's own (QueryFailedError with the pg error as driverError).
 */
export async function preparedQuery<T extends object = Record<string, unknown>>(
  manager: EntityManager,
  name: string,
  text: string,
  values: unknown[],
): Promise<{ rows: T[]; rowCount: number }> {
  const runner = manager.queryRunner;
  const client: Pool | PoolClient | undefined = runner ? ((await runner.connect()) as PoolClient) : pgPool(manager.dataSource);
  if (!client) throw new Error('preparedQuery before the data source was initialised');
  try {
    const result = await client.query<T>({ name, text, values });
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  } catch (err) {
    throw new QueryFailedError(text, values, err as Error);
  }
}

/**
 * A statement name derived from the text, for queries assembled from filters: each combination is
 * planned once per connection (there are a few dozen at most), and equal texts share a name.
 */
export const statementName = (text: string) => `q${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
