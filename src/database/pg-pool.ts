import { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The pg pool behind TypeORM's PostgreSQL driver, for prepared statements outside a transaction and the pool gauges:
 * the one seam that reaches into the driver (docs/performance.md, Framework seams). TypeORM 1.x has no option to hand
 * it our own pool; `PostgresDriver.master` is a public member in its typings, though typed `any`, so the shape is
 * checked here (and by pg-pool.e2e-spec) rather than trusted. Undefined before the data source is initialised.
 */
export function pgPool(dataSource: DataSource): Pool | undefined {
  const { driver } = dataSource;
  if (driver.options.type !== 'postgres') throw new Error(`pgPool: a PostgreSQL data source is needed, not ${driver.options.type}`);
  const master: unknown = (driver as { master?: unknown }).master;
  if (master === undefined) return undefined;
  // A TypeORM upgrade that renames or rewraps the pool fails loudly here instead of reading the wrong object.
  if (!(master instanceof Pool))
    throw new Error('pgPool: TypeORM no longer keeps a pg Pool as driver.master (see src/database/pg-pool.ts)');
  return master;
}
