import type { DataSourceOptions } from 'typeorm';
import { join } from 'node:path';
import { clientWithDeadline } from './deadline-client';
import { loadMigrations } from './migration-files';
import { loadEntities } from './entity-files';

const STATEMENT_TIMEOUT_MS = 15_000;

/** Every entity class under src/, found at start: each module keeps its own tables (docs/architecture.md, Module boundaries). */
export const ENTITIES = loadEntities(join(__dirname, '..'));
/** Every file in migrations/, found at start (README.md, Migrations): none can be left out of a hand-kept list. */
export const MIGRATIONS = loadMigrations(join(__dirname, 'migrations'));

/** One place for the TypeORM options, shared by the app, the migration CLI and the tests. */
export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: poolSize,
      // Fail fast instead of hanging when the database is unreachable (docs/errors.md, Unexpected errors and outages: 503).
      connectionTimeoutMillis: 3000,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      // ... or reachable but not answering (frozen, partitioned): a few seconds after statement_timeout.
      Client: clientWithDeadline(STATEMENT_TIMEOUT_MS + 5000),
      idle_in_transaction_session_timeout: 30000,
      keepAlive: true,
    },
  };
}
