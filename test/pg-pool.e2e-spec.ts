import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source-options';
import { pgPool } from '../src/database/pg-pool';
import { createTestApp, TestApp } from './support/test-app';

/** The seam into TypeORM's driver (docs/performance.md, Framework seams): fails when an upgrade changes what it relies on. */
describe('pgPool (the pg pool behind TypeORM)', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t?.close(), 60_000);

  it('is the pg Pool TypeORM draws its connections from', async () => {
    const pool = pgPool(t.dataSource);
    expect(pool).toBeInstanceOf(Pool);
    // The pool's public 'acquire' event names each client it hands out; the background workers draw from it too, so
    // counting clients in use would race with them.
    const acquired = new Set<unknown>();
    const onAcquire = (client: unknown) => acquired.add(client);
    pool!.on('acquire', onAcquire);
    const runner = t.dataSource.createQueryRunner();
    try {
      const client: unknown = await runner.connect();
      expect(acquired.has(client)).toBe(true);
    } finally {
      pool!.off('acquire', onAcquire);
      await runner.release();
    }
    const [row] = (await pool!.query<{ name: string }>('SELECT current_database() AS name')).rows;
    expect(row.name).toBe(t.databaseName);
  });

  it('is undefined before the data source is initialised', () => {
    expect(pgPool(new DataSource(dataSourceOptions('postgres://nobody@127.0.0.1:1/licence_test_never_connected')))).toBeUndefined();
  });

  it('refuses a driver that keeps something else than a pg Pool (a TypeORM upgrade that changed it)', () => {
    const changed = { driver: { options: { type: 'postgres' }, master: { query: () => undefined } } } as unknown as DataSource;
    expect(() => pgPool(changed)).toThrow(/no longer keeps a pg Pool/);
    const other = { driver: { options: { type: 'mysql' }, master: Object.create(Pool.prototype) as Pool } } as unknown as DataSource;
    expect(() => pgPool(other)).toThrow(/PostgreSQL data source is needed/);
  });
});
