import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';

/** The TypeORM CLI's data source (README.md, Migrations): loaded as the CLI loads it, with DATABASE_URL from the environment. */
function loadOrmconfig(databaseUrl: string | undefined): DataSource {
  const saved = process.env.DATABASE_URL;
  if (databaseUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = databaseUrl;
  try {
    let dataSource: DataSource | undefined;
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      dataSource = (require('../ormconfig') as { default: DataSource }).default;
    });
    return dataSource!;
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
}

describe('ormconfig.ts (the TypeORM CLI data source)', () => {
  const folder = join(__dirname, '..', 'src', 'database', 'migrations');

  it('finds exactly the migration files in src/database/migrations, in timestamp order', () => {
    const dataSource = loadOrmconfig('postgres://nobody@127.0.0.1:1/licence_test_never_connected');
    const classes = dataSource.options.migrations as (new () => object)[];
    const files = readdirSync(folder).sort();
    expect(files.length).toBeGreaterThan(10);
    // A class is named <Name><timestamp> and lives in <timestamp>-<name>.ts: each file gives exactly one.
    expect(classes.map((cls) => /(\d{13})$/.exec(cls.name)?.[1])).toEqual(files.map((file) => file.slice(0, 13)));
    expect(dataSource.options).toMatchObject({ type: 'postgres', migrationsTableName: 'migrations', migrationsTransactionMode: 'each' });
    expect(dataSource.isInitialized).toBe(false);
  });

  it('refuses to load without DATABASE_URL and says so', () => {
    expect(() => loadOrmconfig(undefined)).toThrow(/DATABASE_URL is not set/);
    expect(() => loadOrmconfig('')).toThrow(/DATABASE_URL is not set/);
  });
});
