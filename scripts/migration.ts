import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions, MIGRATIONS } from '../src/database/data-source-options';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { pendingSchemaChanges, runMigrations } from '../src/database/migrate';
import { MIGRATION_NAME, migrationFileName, migrationSource, nextMigrationTimestamp } from '../src/database/migration-source';

const USAGE = `usage: npm run migration:generate -- NAME

Writes src/database/migrations/<timestamp>-<name>.ts with the SQL that makes a freshly migrated database match the
entities (NAME in PascalCase, e.g. AddWebhookEndpoints). It uses a throwaway embedded PostgreSQL of its own, so neither
your data nor DATABASE_URL play a part. Applying, undoing and listing migrations: licence-server migrate run|revert|show.`;

const MIGRATIONS_DIR = join('src', 'database', 'migrations');

/** Migrates a throwaway database from scratch and writes what the entities still want as a new migration. */
async function generate(args: string[]): Promise<void> {
  const [name] = args;
  if (args.length !== 1 || !MIGRATION_NAME.test(name)) throw new Error(USAGE);
  const workDir = mkdtempSync(join(tmpdir(), 'licence-migration-'));
  const embedded = await EmbeddedDatabase.start({ dir: join(workDir, 'postgres'), secretsDir: workDir });
  try {
    const url = await embedded.ensureDatabase('licence_generate');
    await runMigrations(url);
    const dataSource = await new DataSource(dataSourceOptions(url, 2)).initialize();
    const sql = await pendingSchemaChanges(dataSource).finally(() => dataSource.destroy());
    if (sql.upQueries.length === 0) {
      console.log('No changes: the entities describe exactly what the migrations create.');
      return;
    }
    const timestamp = nextMigrationTimestamp(
      MIGRATIONS.map((m) => m.name),
      Date.now(),
    );
    const file = join(process.cwd(), MIGRATIONS_DIR, migrationFileName(name, timestamp));
    writeFileSync(file, migrationSource(name, timestamp, sql), { flag: 'wx' });
    console.log(`Wrote ${relative(process.cwd(), file)} (${sql.upQueries.length} statements).`);
    console.log('Read it and say why in its comment; it is picked up from the folder (npm run build for dist/).');
  } finally {
    await embedded.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

generate(process.argv.slice(2)).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
