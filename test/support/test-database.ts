import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** State the global setup hands to every test worker through the environment. */
export const ENV_ADMIN_URL = 'LICENCE_TEST_ADMIN_URL';
export const ENV_TEMPLATE = 'LICENCE_TEST_TEMPLATE';
export const ENV_SIGNING_KEY = 'LICENCE_TEST_SIGNING_KEY';

export function urlFor(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Refuses anything but the databases the tests create themselves (their names contain "test"). */
export function assertTestDatabaseName(name: string): void {
  if (!/^licence_test_[a-z0-9_]+$/.test(name)) throw new Error(`refusing to touch database "${name}": not a test database`);
}

export async function withAdminClient<T>(adminUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 10000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export const newDatabaseName = (kind: string) => `licence_test_${kind}_${process.pid}_${randomBytes(4).toString('hex')}`;

/**
 * A test database's sessions commit without waiting for the WAL flush (docs/testing.md, Test-only database settings):
 * on a server the tests share (TEST_DATABASE_URL, the cluster tier's), a per-database setting, so the server's own
 * configuration and its other databases stay as they are. ~3 ms a commit against ~0.2 ms on this machine's disk.
 */
export async function skipCommitFlush(client: Client, name: string): Promise<void> {
  assertTestDatabaseName(name);
  await client.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
}

/** CREATE DATABASE ... TEMPLATE: a migrated copy in a few tens of milliseconds. */
export async function createDatabaseFromTemplate(adminUrl: string, template: string, name: string): Promise<string> {
  assertTestDatabaseName(name);
  assertTestDatabaseName(template);
  await withAdminClient(adminUrl, async (client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        // A database's settings are not copied from its template.
        await skipCommitFlush(client, name);
        return;
      } catch (err) {
        // "source database is being accessed by other users": another worker is copying it right now.
        if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  });
  return urlFor(adminUrl, name);
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  assertTestDatabaseName(name);
  await withAdminClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Makes a database unreachable for the app (new connections refused, open ones cut): a database outage for one test file. */
export async function cutDatabase(adminUrl: string, name: string): Promise<void> {
  assertTestDatabaseName(name);
  await withAdminClient(adminUrl, async (client) => {
    await client.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
    await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  });
}

export async function restoreDatabase(adminUrl: string, name: string): Promise<void> {
  assertTestDatabaseName(name);
  await withAdminClient(adminUrl, (client) => client.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`));
}
