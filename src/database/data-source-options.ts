import type { DataSourceOptions } from 'typeorm';
import { join } from 'node:path';
import { clientWithDeadline } from './deadline-client';
import { loadMigrations } from './migration-files';
import { AuditEntry } from '../audit/audit-entry.entity';
import { AdminToken } from '../auth/admin-token.entity';
import { User } from '../dashboard/user.entity';
import { Activation } from '../licenses/activation.entity';
import { License } from '../licenses/license.entity';
import { StoredSigningKey } from '../keyring/signing-key.entity';
import { Product } from '../products/product.entity';
import { StatsDelta } from '../stats/stats-delta.entity';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookExpiryNotice } from '../webhooks/webhook.entities';

const STATEMENT_TIMEOUT_MS = 15_000;

export const ENTITIES = [
  Product,
  License,
  Activation,
  AuditEntry,
  User,
  StoredSigningKey,
  AdminToken,
  StatsDelta,
  WebhookEndpoint,
  WebhookEvent,
  WebhookDelivery,
  WebhookExpiryNotice,
];
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
