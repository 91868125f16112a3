import { PgBoss, type ConstructorOptions, type Db } from 'pg-boss';
import type { EntityManager } from 'typeorm';

/** pg-boss keeps its tables here, apart from the entities' tables (the schema-diff check compares only those). */
export const JOBS_SCHEMA = 'pgboss';

/** A pg-boss instance on `url` with our schema; nothing runs until start(). */
export function createJobEngine(url: string, options: Partial<ConstructorOptions> = {}): PgBoss {
  return new PgBoss({ connectionString: url, schema: JOBS_SCHEMA, application_name: 'licence-server-jobs', ...options });
}

/**
 * Installs or upgrades pg-boss's schema (pg-boss migrates under its own advisory lock), so the first start of
 * the server, and every clone of the test template database, finds it ready. Runs no schedules and no workers.
 */
export async function installJobEngine(url: string): Promise<void> {
  const boss = createJobEngine(url, { max: 1, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.stop({ graceful: false, close: true, timeout: 1000 });
}

/**
 * pg-boss's executor on the connection of a TypeORM transaction: a job sent with it is inserted by that
 * transaction, so it exists exactly when the change that caused it commits (see JobsService.send).
 */
export function transactionExecutor(manager: EntityManager): Db {
  const runner = manager.queryRunner;
  if (!runner || !runner.isTransactionActive) throw new Error('jobs: send({ manager }) needs the manager of an open transaction');
  return {
    executeSql: async (text: string, values?: unknown[]) => {
      const client = (await runner.connect()) as { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };
      const result = await client.query(text, values);
      return { rows: result.rows };
    },
  };
}
