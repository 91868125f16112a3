import type { Command } from 'commander';
import { lazy, type Output } from './output';
import type * as CommandDatabaseModule from './command-database';
import type * as MigrateModule from '../database/migrate';

// The database layer is imported when a command runs, so `--help` starts at once.
const migrations = () => lazy<typeof MigrateModule>('../database/migrate');

/**
 * `licence-server migrate run|revert|show` (docs/deployment.md, Migrations): DATABASE_URL, else the embedded PostgreSQL
 * under DATA_DIR. Writing a new migration (`npm run migration:generate`) needs the sources, so it stays an npm script.
 */
export function registerMigrateCommands(program: Command, output: Output): void {
  const migrate = program
    .command('migrate')
    .description('apply, undo or list the database migrations (the server also applies them at start-up)');
  const withDatabase = async (work: (url: string) => Promise<void>) => {
    const { commandDatabase } = lazy<typeof CommandDatabaseModule>('./command-database');
    const database = await commandDatabase(process.env, output.info, { migrate: false });
    try {
      await work(database.url);
    } finally {
      await database.release();
    }
  };
  migrate
    .command('run')
    .description('apply the pending migrations')
    .action(() =>
      withDatabase(async (url) => {
        const applied = await migrations().runMigrations(url);
        output.out(applied.length ? `Applied: ${applied.join(', ')}` : 'No pending migrations.');
      }),
    );
  migrate
    .command('revert')
    .description('undo the last applied migration')
    .action(() =>
      withDatabase(async (url) => {
        const reverted = await migrations().revertLastMigration(url);
        output.out(reverted ? `Reverted: ${reverted}` : 'No migration to revert.');
      }),
    );
  migrate
    .command('show')
    .description('list every migration, [X] when applied')
    .action(() =>
      withDatabase(async (url) => {
        for (const m of await migrations().migrationStatus(url)) output.out(`${m.applied ? '[X]' : '[ ]'} ${m.name}`);
      }),
    );
}
