import type { DataSourceOptions } from 'typeorm';
import { clientWithDeadline } from './deadline-client';
import { AuditEntry } from '../audit/audit-entry.entity';
import { AdminToken } from '../auth/admin-token.entity';
import { User } from '../dashboard/user.entity';
import { Activation } from '../licenses/activation.entity';
import { License } from '../licenses/license.entity';
import { StoredSigningKey } from '../keyring/signing-key.entity';
import { Product } from '../products/product.entity';
import { StatsDelta } from '../stats/stats-delta.entity';
import { InitialSchema1763780000000 } from './migrations/1763780000000-initial-schema';
import { SeedProducts1763780000001 } from './migrations/1763780000001-seed-products';
import { StatsCounters1795323918361 } from './migrations/1795323918361-stats-counters';
import { StatsReadIndexes1795395863444 } from './migrations/1795395863444-stats-read-indexes';
import { EntitiesDescribeSchema1795500000000 } from './migrations/1795500000000-entities-describe-schema';
import { AdminTokens1796200000000 } from './migrations/1796200000000-admin-tokens';
import { SeatPolicies1796100000000 } from './migrations/1796100000000-seat-policies';
import { SigningKeys1796000000000 } from './migrations/1796000000000-signing-keys';
import { StaffSearch1796300000000 } from './migrations/1796300000000-staff-search';
import { Webhooks1796400000000 } from './migrations/1796400000000-webhooks';
import { StatsHourly1796500000000 } from './migrations/1796500000000-stats-hourly';
import { WebhookSecretsEncrypted1796610000000 } from './migrations/1796610000000-webhook-secrets-encrypted';
import { ProductIds1796630000000 } from './migrations/1796630000000-product-ids';
import { EventSpine1796700000000 } from './migrations/1796700000000-event-spine';
import { OneStatusRule1796800000000 } from './migrations/1796800000000-one-status-rule';
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
export const MIGRATIONS = [
  InitialSchema1763780000000,
  SeedProducts1763780000001,
  StatsCounters1795323918361,
  StatsReadIndexes1795395863444,
  EntitiesDescribeSchema1795500000000,
  SigningKeys1796000000000,
  SeatPolicies1796100000000,
  AdminTokens1796200000000,
  StaffSearch1796300000000,
  Webhooks1796400000000,
  StatsHourly1796500000000,
  WebhookSecretsEncrypted1796610000000,
  ProductIds1796630000000,
  EventSpine1796700000000,
  OneStatusRule1796800000000,
];

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
      // Fail fast instead of hanging when the database is unreachable (CONTRACT 2: 503).
      connectionTimeoutMillis: 3000,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      // ... or reachable but not answering (frozen, partitioned): a few seconds after statement_timeout.
      Client: clientWithDeadline(STATEMENT_TIMEOUT_MS + 5000),
      idle_in_transaction_session_timeout: 30000,
      keepAlive: true,
    },
  };
}
