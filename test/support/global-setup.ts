import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedDatabase } from '../../src/database/embedded-database';
import { runMigrations } from '../../src/database/migrate';
import { ENV_ADMIN_URL, ENV_SIGNING_KEY, ENV_TEMPLATE, newDatabaseName, skipCommitFlush, urlFor, withAdminClient } from './test-database';

/** The embedded test cluster's settings on top of the server's (never used by `npm start`). */
export const TEST_ONLY_SETTINGS = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];

/**
 * Starts (or connects to) a real PostgreSQL and migrates a template database once;
 * every test file then clones it. TEST_DATABASE_URL names a server to use instead of the
 * embedded one: the tests only create and drop their own `licence_test_*` databases there.
 */
export default async function globalSetup(): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'licence-test-'));
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    // A throw-away cluster: durability buys nothing here and costs every commit a flush (docs/testing.md,
    // Test-only database settings). The server's own start (npm start) never passes these.
    const embedded = await EmbeddedDatabase.start({
      dir: join(workDir, 'postgres'),
      secretsDir: workDir,
      extraSettings: TEST_ONLY_SETTINGS,
    });
    (globalThis as Record<string, unknown>).__licenceTestEmbedded = embedded;
    adminUrl = embedded.url;
  }
  (globalThis as Record<string, unknown>).__licenceTestWorkDir = workDir;

  const template = newDatabaseName('tpl');
  await withAdminClient(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE "${template}"`);
    await skipCommitFlush(client, template);
  });
  await runMigrations(urlFor(adminUrl, template));

  const keyFile = join(workDir, 'signing-key.pem');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });

  process.env[ENV_ADMIN_URL] = adminUrl;
  process.env[ENV_TEMPLATE] = template;
  process.env[ENV_SIGNING_KEY] = keyFile;
}
