import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { createDatabaseFromTemplate, dropDatabase, ENV_ADMIN_URL, ENV_TEMPLATE, newDatabaseName } from '../support/test-database';

/**
 * Each database function lives in versioned files under src/database/sql/ (docs/architecture.md, Database functions):
 * the migrated database runs the newest version of each, and a new function fails here until it has its file.
 */
const SQL_DIR = join(__dirname, '../../src/database/sql');

/** Functions a later migration dropped: their files stay, for the older migrations that load them. */
const DROPPED = ['licenses_stats_delete_seats'];

/** Each function's newest file: `license_status` → its highest `.vN.sql`. */
function newestFiles(): Map<string, { version: number; text: string }> {
  const newest = new Map<string, { version: number; text: string }>();
  for (const file of readdirSync(SQL_DIR)) {
    const match = /^([a-z][a-z0-9_]*)\.v([1-9]\d*)\.sql$/.exec(file);
    if (!match) throw new Error(`src/database/sql/${file} is not named <function>.v<N>.sql`);
    const version = Number(match[2]);
    if ((newest.get(match[1])?.version ?? 0) < version) newest.set(match[1], { version, text: readFileSync(join(SQL_DIR, file), 'utf8') });
  }
  return newest;
}

const fold = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * What the live function's body (PostgreSQL stores it verbatim as prosrc) may be, whitespace folded: the text between
 * `AS $$` and the closing `$$`; for a file that is a DO block choosing one of its definitions when it runs (the search
 * folding, with or without unaccent), any of its `AS $f$ ... $f$` bodies, with format()'s `%I` and `%L` standing for an
 * identifier and a literal.
 */
function bodyMatchers(text: string): RegExp[] {
  const exact = (body: string) => fold(body).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (/^DO \$\$/m.test(text))
    return [...text.matchAll(/\bAS \$f\$([\s\S]*?)\$f\$/g)].map(
      (m) => new RegExp(`^${exact(m[1]).replace(/%I/g, '"?[a-z_][a-z0-9_]*"?').replace(/%L/g, "'[^']*'")}$`),
    );
  const body = /\bAS \$\$([\s\S]*)\$\$/.exec(text)?.[1];
  return body === undefined ? [] : [new RegExp(`^${exact(body)}$`)];
}

describe('database functions: one versioned file each', () => {
  let live: Map<string, string>;

  beforeAll(async () => {
    const adminUrl = process.env[ENV_ADMIN_URL] as string;
    const name = newDatabaseName('functions');
    const client = new Client({ connectionString: await createDatabaseFromTemplate(adminUrl, process.env[ENV_TEMPLATE] as string, name) });
    try {
      await client.connect();
      // The schema's own functions; those of extensions (pg_trgm, unaccent) belong to the extension.
      const { rows } = await client.query<{ name: string; source: string }>(`
        SELECT p.proname AS name, p.prosrc AS source FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = current_schema()
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')`);
      live = new Map(rows.map((row) => [row.name, row.source]));
    } finally {
      await client.end();
      await dropDatabase(adminUrl, name);
    }
  }, 60_000);

  it('every function of the migrated schema has its files', () => {
    const files = newestFiles();
    expect([...live.keys()].filter((name) => !files.has(name)).sort()).toEqual([]);
  });

  it('the migrated schema runs the newest version of each file', () => {
    const files = newestFiles();
    expect(files.size).toBeGreaterThanOrEqual(8);
    for (const [name, { version, text }] of files) {
      expect({ name, version, live: live.has(name) }).toEqual({ name, version, live: !DROPPED.includes(name) });
      if (DROPPED.includes(name)) continue;
      const matchers = bodyMatchers(text);
      const body = fold(live.get(name) ?? '');
      expect({ name, version, definitions: matchers.length > 0, matches: matchers.some((m) => m.test(body)), body }).toEqual({
        name,
        version,
        definitions: true,
        matches: true,
        body,
      });
    }
  });
});
