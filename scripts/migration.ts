import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DataSource } from 'typeorm';
import { dataSourceOptions, MIGRATIONS } from '../src/database/data-source-options';
import { EmbeddedDatabase } from '../src/database/embedded-database';
import { migrationStatus, pendingSchemaChanges, revertLastMigration, runMigrations } from '../src/database/migrate';
import { MIGRATION_NAME, migrationFileName, migrationSource, nextMigrationTimestamp } from '../src/database/migration-source';
import { commandDatabase } from './command-database';

const USAGE = `usage: npm run migration:run | migration:revert | migration:show | migration:generate -- NAME

  run       applies pending migrations (the server also does at start-up)
  revert    undoes the last applied migration
  show      lists every migration, [X] when applied
  generate  writes src/database/migrations/<timestamp>-<name>.ts with the SQL that makes a freshly migrated
            database match the entities (NAME in PascalCase, e.g. AddWebhookEndpoints)

run, revert and show use DATABASE_URL, else the embedded PostgreSQL under DATA_DIR; generate uses a throwaway
embedded PostgreSQL of its own, so neither your data nor DATABASE_URL play a part.`;

const MIGRATIONS_DIR = join('src', 'database', 'migrations');

async function main(command: string | undefined, args: string[]): Promise<void> {
  const log = (line: string) => console.log(line);
  if (command === 'generate') return generate(args);
  if (!['run', 'revert', 'show'].includes(command ?? '') || args.length > 0) throw new Error(USAGE);
  const database = await commandDatabase(process.env, log, { migrate: false });
  try {
    if (command === 'run') {
      const applied = await runMigrations(database.url);
      log(applied.length ? `Applied: ${applied.join(', ')}` : 'No pending migrations.');
    } else if (command === 'revert') {
      const reverted = await revertLastMigration(database.url);
      log(reverted ? `Reverted: ${reverted}` : 'No migration to revert.');
    } else {
      for (const m of await migrationStatus(database.url)) log(`${m.applied ? '[X]' : '[ ]'} ${m.name}`);
    }
  } finally {
    await database.release();
  }
}

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

main(process.argv[2], process.argv.slice(3)).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
