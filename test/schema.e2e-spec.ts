import { DataSource } from 'typeorm';
import { dataSourceOptions, ENTITIES } from '../src/database/data-source-options';
import { pendingSchemaChanges, runMigrations } from '../src/database/migrate';
import { dropDatabase, ENV_ADMIN_URL, newDatabaseName, urlFor, withAdminClient } from './support/test-database';

/** Tables no entity describes: TypeORM's migration ledger and metadata, and connect-pg-simple's session stores (staff, portal). */
const NOT_ENTITIES = ['migrations', 'typeorm_metadata', 'session', 'portal_session'];

interface NamedDefinition {
  table: string;
  name: string;
  definition: string;
}

/** CHECKs, partial-index predicates and generated-column expressions, as PostgreSQL prints them. */
const DEFINITIONS_SQL = `
  SELECT c.conrelid::regclass::text AS "table", c.conname AS name, pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
   WHERE n.nspname = current_schema() AND c.contype = 'c'
  UNION ALL
  SELECT i.indrelid::regclass::text, ic.relname, 'WHERE ' || pg_get_expr(i.indpred, i.indrelid)
    FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
   WHERE n.nspname = current_schema() AND i.indpred IS NOT NULL
  UNION ALL
  SELECT table_name, column_name, 'GENERATED ' || generation_expression
    FROM information_schema.columns WHERE table_schema = current_schema() AND is_generated = 'ALWAYS'
  ORDER BY 1, 2`;

/** Every index and constraint PostgreSQL has on a table, by name. */
const NAMES_SQL = `
  SELECT t.relname AS "table", c.relname AS name FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
   WHERE n.nspname = current_schema()
  UNION
  SELECT t.relname, k.conname FROM pg_constraint k
    JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
   WHERE n.nspname = current_schema() AND k.contype IN ('c', 'f', 'p', 'u')
  ORDER BY 1, 2`;

/**
 * The entities describe the schema the migrations create, so neither `npm run migration:generate` nor a debugging
 * `synchronize` would drop a unique index, a CHECK or the generated search column, and code that names a constraint
 * names one the entity declares.
 */
describe('schema: the entities describe what the migrations create', () => {
  const adminUrl = process.env[ENV_ADMIN_URL] as string;
  const migrated = newDatabaseName('schema');
  const synchronized = newDatabaseName('schema_sync');
  let dataSource: DataSource;

  beforeAll(async () => {
    await withAdminClient(adminUrl, async (client) => {
      await client.query(`CREATE DATABASE "${migrated}"`);
      await client.query(`CREATE DATABASE "${synchronized}"`);
    });
    await runMigrations(urlFor(adminUrl, migrated));
    dataSource = await new DataSource(dataSourceOptions(urlFor(adminUrl, migrated), 2)).initialize();
  }, 60_000); // a migration from scratch, not a template clone
  afterAll(async () => {
    await dataSource?.destroy();
    await dropDatabase(adminUrl, migrated);
    await dropDatabase(adminUrl, synchronized);
  });

  it('TypeORM finds nothing to change in a freshly migrated database', async () => {
    const sql = (await pendingSchemaChanges(dataSource)).upQueries.map((q) => q.query);
    // On failure the SQL below is what `npm run migration:generate` would write: declare it on the entity, or migrate it.
    expect(sql.join(';\n')).toBe('');
  });

  it('every table but the listed infrastructure ones is an entity', async () => {
    const tables = await dataSource.query<{ name: string }[]>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`,
    );
    const described = new Set(ENTITIES.map((entity) => dataSource.getMetadata(entity).tableName));
    expect(tables.map((t) => t.name).filter((name) => !described.has(name) && !NOT_ENTITIES.includes(name))).toEqual([]);
  });

  it('every index and constraint of an entity table has the name an entity declares, and nothing else is declared', async () => {
    const declared = dataSource.entityMetadatas.flatMap((m) => [
      ...m.indices.map((i) => ({ table: m.tableName, name: i.name })),
      ...m.uniques.map((u) => ({ table: m.tableName, name: u.name })),
      ...m.checks.map((c) => ({ table: m.tableName, name: c.name })),
      ...m.foreignKeys.map((f) => ({ table: m.tableName, name: f.name })),
      ...m.primaryColumns.slice(0, 1).map((c) => ({ table: m.tableName, name: c.primaryKeyConstraintName })),
    ]);
    const actual = await dataSource.query<{ table: string; name: string }[]>(NAMES_SQL);
    // The trigram index exists only where the pg_trgm extension could be created (the migration skips it elsewhere).
    const [trgm] = await dataSource.query<unknown[]>(`SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'`);
    if (!trgm)
      declared.splice(
        declared.findIndex((d) => d.name === 'licenses_search_trgm_idx'),
        1,
      );
    const entityTables = new Set(dataSource.entityMetadatas.map((m) => m.tableName));
    const byName = (a: { table: string; name?: string }, b: { table: string; name?: string }) =>
      `${a.table}.${a.name}`.localeCompare(`${b.table}.${b.name}`);
    expect([...declared].sort(byName)).toEqual(actual.filter((a) => entityTables.has(a.table)).sort(byName));
  });

  it('the CHECKs, partial-index predicates and generated columns the entities declare read as the migrated ones', async () => {
    // TypeORM's diff compares these by name only: build the schema from the entities and compare what PostgreSQL made of each.
    const fromEntities = await new DataSource({ ...dataSourceOptions(urlFor(adminUrl, synchronized), 2), migrations: [] }).initialize();
    try {
      await fromEntities.synchronize();
      const expected = await fromEntities.query<NamedDefinition[]>(DEFINITIONS_SQL);
      const actual = await dataSource.query<NamedDefinition[]>(DEFINITIONS_SQL);
      // Indexes TypeORM cannot build (expressions, operator classes) exist only in the migrated database.
      const unsynchronized = new Set(dataSource.entityMetadatas.flatMap((m) => m.indices.filter((i) => !i.synchronize).map((i) => i.name)));
      const entityTables = new Set(dataSource.entityMetadatas.map((m) => m.tableName));
      expect(expected.length).toBeGreaterThan(0);
      expect(actual.filter((d) => entityTables.has(d.table) && !unsynchronized.has(d.name))).toEqual(expected);
    } finally {
      await fromEntities.destroy();
    }
  }, 30_000);
});
