import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Each table and the folder of the module that owns it (docs/architecture.md, Database style). */
const OWNERS: Record<string, string> = {
  licenses: 'licenses',
  activations: 'licenses',
  usage_counters: 'licenses',
  usage_idempotency_keys: 'licenses',
  trials: 'licenses',
  license_bulk_operations: 'licenses',
  license_bulk_items: 'licenses',
  products: 'products',
  audit_entries: 'audit',
  webhook_endpoints: 'webhooks',
  webhook_events: 'webhooks',
  webhook_deliveries: 'webhooks',
  webhook_expiry_notices: 'webhooks',
  stats_deltas: 'stats',
  admin_tokens: 'auth',
  signing_keys: 'keyring',
  users: 'dashboard',
  saved_views: 'dashboard',
  mail_messages: 'mail',
  mail_unsubscribes: 'mail',
  portal_sign_in_tokens: 'portal',
  releases: 'releases',
  release_artifacts: 'releases',
  release_downloads: 'releases',
};

/** The documented crossings: the event recorder writes the outbox event with its audit entry in one statement. */
const ALLOWED = new Set(['audit/event-recorder.ts webhook_events']);

const SRC = join(__dirname, '..');
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

describe('repositories own their tables', () => {
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
