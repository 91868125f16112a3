import { DataSource } from 'typeorm';
import type { SqlInMemory } from 'typeorm/driver/SqlInMemory';
import { installJobEngine } from '../jobs/job-engine';
import { dataSourceOptions } from './data-source-options';

/**
 * The one entry point to the migrations: the server's start-up (bootstrap.ts), `npm run migration:*`
 * (src/cli/migrate.command.ts) and the tests all come through here, on the data source of data-source-options.ts.
 */

// Any constant works; it only has to be the same for every instance of the server.
const MIGRATION_LOCK_ID = 7_310_042;

/** A small pool: migrations run one at a time, and the advisory lock holds one more connection. */
async function openDataSource(url: string): Promise<DataSource> {
  return new DataSource({ ...dataSourceOptions(url, 2), extra: { max: 2, connectionTimeoutMillis: 10000 } }).initialize();
}

async function withDataSource<T>(url: string, work: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const dataSource = await openDataSource(url);
  try {
    return await work(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/** Runs `work` holding the migration lock, so several instances starting at once apply each migration exactly once. */
async function withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const lock = dataSource.createQueryRunner();
  try {
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    return await work();
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await lock.release();
  }
}

/**
 * Applies pending migrations; returns their names. Then installs or upgrades the job engine's own schema
 * (pg-boss, schema `pgboss`), which it versions itself.
 */
export async function runMigrations(url: string): Promise<string[]> {
  const applied = await withDataSource(url, (dataSource) =>
    withMigrationLock(dataSource, async () => {
      const names = await dataSource.runMigrations({ transaction: 'each' });
      await adoptTypeormMetadata(dataSource);
      return names.map((m) => m.name);
    }),
  );
  await installJobEngine(url);
  return applied;
}

/** Undoes the last applied migration; returns its name, or undefined when none was applied. */
export async function revertLastMigration(url: string): Promise<string | undefined> {
  return withDataSource(url, (dataSource) =>
    withMigrationLock(dataSource, async () => {
      const [last] = await dataSource.query<{ name: string }[]>(`SELECT name FROM migrations ORDER BY id DESC LIMIT 1`).catch(() => []);
      if (!last) return undefined;
      await dataSource.undoLastMigration({ transaction: 'each' });
      return last.name;
    }),
  );
}

/** Every known migration, in order, and whether it is applied. */
export async function migrationStatus(url: string): Promise<{ name: string; applied: boolean }[]> {
  return withDataSource(url, async (dataSource) => {
    const applied = await dataSource
      .query<{ name: string }[]>(`SELECT name FROM migrations`)
      .then((rows) => new Set(rows.map((r) => r.name)))
      .catch(() => new Set<string>()); // no ledger yet: nothing applied
    return dataSource.migrations.map((m) => ({ name: m.name as string, applied: applied.has(m.name as string) }));
  });
}

/** The SQL that would make the database match the entities: empty when the two agree (test/schema.e2e-spec.ts). */
export function pendingSchemaChanges(dataSource: DataSource): Promise<SqlInMemory> {
  return dataSource.driver.createSchemaBuilder().log();
}

/**
 * typeorm_metadata names the database each row was written in, and TypeORM only reads the rows of the current one:
 * in a copy restored under another name (or a test clone) it would lose the expression of licenses.search_text and
 * see a schema change that is none. The rows of this schema belong to this database, whatever it is called now.
 */
async function adoptTypeormMetadata(dataSource: DataSource): Promise<void> {
  await dataSource.query(`
    DO $$ BEGIN
      IF to_regclass('typeorm_metadata') IS NOT NULL THEN
        UPDATE typeorm_metadata SET "database" = current_database()
         WHERE "schema" = current_schema() AND "database" IS DISTINCT FROM current_database();
      END IF;
    END $$`);
}
