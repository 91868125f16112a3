import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client } from 'pg';
import { createDatabaseFromTemplate, dropDatabase, ENV_ADMIN_URL, ENV_TEMPLATE, newDatabaseName } from '../support/test-database';

/**
 * Each table of the migrated database and the folder of the module that owns it (docs/architecture.md, Database
 * style). Every table is listed, the frameworks' own included: a new table fails the first test until it is placed.
 */
const OWNERS: Record<string, string> = {
  licenses: 'licenses',
  activations: 'licenses',
  usage_counters: 'licenses',
  usage_idempotency_keys: 'licenses',
  trials: 'licenses',
  license_bulk_operations: 'licenses',
  license_bulk_items: 'licenses',
  customer_notes: 'licenses',
  license_seat_versions: 'licenses',
  relay_pools: 'licenses',
  store_events: 'stores',
  store_plans: 'stores',
  license_expiry_notices: 'licenses',
  products: 'products',
  audit_entries: 'audit',
  event_outbox: 'events',
  webhook_endpoints: 'webhooks',
  webhook_deliveries: 'webhooks',
  stats_deltas: 'stats',
  admin_tokens: 'auth',
  signing_keys: 'keyring',
  users: 'staff',
  saved_views: 'dashboard',
  staff_invites: 'staff',
  mail_messages: 'mail',
  mail_unsubscribes: 'mail',
  portal_sign_in_tokens: 'portal',
  staff_totp_secrets: 'staff',
  staff_recovery_codes: 'staff',
  staff_passkeys: 'staff',
  staff_sso_identities: 'staff',
  staff_sign_in_failures: 'staff',
  // The frameworks' tables: TypeORM's migration ledger and metadata, connect-pg-simple's session stores.
  migrations: 'database',
  typeorm_metadata: 'database',
  session: 'dashboard',
  portal_session: 'portal',
  releases: 'releases',
  release_artifacts: 'releases',
  release_downloads: 'releases',
};

/**
 * The documented crossings (docs/architecture.md, Database style): the event recorder writes each event's audit entry
 * with its outbox row in one statement; a webhook delivery sends the body of the outbox event it refers to.
 */
const ALLOWED = new Set(['events/event-recorder.ts audit_entries', 'webhooks/webhooks.repository.ts event_outbox']);

const SRC = join(__dirname, '../../src');
const TABLE_USE = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\\s+(${Object.keys(OWNERS).join('|')})\\b`, 'g');

/** `module/file table` for every statement in `text` (a file of folder `module`) that names another module's table. */
function foreignTableUses(file: string, text: string): string[] {
  const module = file.split('/')[0];
  const found = new Set<string>();
  for (const m of text.matchAll(TABLE_USE)) {
    const use = `${file} ${m[1]}`;
    if (OWNERS[m[1]] !== module && !ALLOWED.has(use)) found.add(use);
  }
  return [...found];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The base tables of the schema the migrations build (pg-boss keeps its own schema, `pgboss`, and is no module's). */
async function migratedTables(): Promise<string[]> {
  const adminUrl = process.env[ENV_ADMIN_URL] as string;
  const name = newDatabaseName('tables');
  const client = new Client({ connectionString: await createDatabaseFromTemplate(adminUrl, process.env[ENV_TEMPLATE] as string, name) });
  try {
    await client.connect();
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    return rows.map((row) => row.table_name);
  } finally {
    await client.end();
    await dropDatabase(adminUrl, name);
  }
}

describe('repositories own their tables', () => {
  it('every table of the migrated database has an owner, and every owner names a table that exists', async () => {
    const tables = await migratedTables();
    expect(tables.length).toBeGreaterThanOrEqual(27);
    expect(tables.filter((table) => !(table in OWNERS))).toEqual([]);
    expect(Object.keys(OWNERS).filter((table) => !tables.includes(table))).toEqual([]);
  }, 60_000);

  it('no source file outside a table’s module names the table in SQL (migrations define the views others read)', () => {
    const uses = sourceFiles(SRC).flatMap((path) => foreignTableUses(relative(SRC, path), readFileSync(path, 'utf8')));
    expect(uses).toEqual([]);
  });

  it('catches a query that reads another module’s table directly', () => {
    const sneaky = 'SELECT id FROM licenses WHERE expires_at < now() UNION SELECT 1 FROM activations JOIN products p ON true';
    expect(foreignTableUses('webhooks/webhooks.repository.ts', sneaky).sort()).toEqual([
      'webhooks/webhooks.repository.ts activations',
      'webhooks/webhooks.repository.ts licenses',
      'webhooks/webhooks.repository.ts products',
    ]);
    expect(foreignTableUses('stats/stats.repository.ts', 'SELECT 1 FROM usable_license_deadlines JOIN product_catalog p ON true')).toEqual(
      [],
    );
    expect(foreignTableUses('licenses/seats.repository.ts', 'UPDATE activations SET released_at = now()')).toEqual([]);
  });
});
