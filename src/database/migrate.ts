import { DataSource } from 'typeorm';
import { installJobEngine } from '../jobs/job-engine';
import { dataSourceOptions } from './data-source-options';

// Any constant works; it only has to be the same for every instance of the server.
const MIGRATION_LOCK_ID = 7_310_042;

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so several instances
 * starting at once apply each migration exactly once; then installs or upgrades the
 * job engine's own schema (pg-boss, schema `pgboss`), which it versions itself.
 */
export async function runMigrations(url: string): Promise<string[]> {
  const dataSource = new DataSource({ ...dataSourceOptions(url, 2), extra: { max: 2, connectionTimeoutMillis: 10000 } });
  await dataSource.initialize();
  const lock = dataSource.createQueryRunner();
  try {
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    await installJobEngine(url);
    return applied.map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await lock.release();
    await dataSource.destroy();
  }
}
