import { rmSync } from 'node:fs';
import type { EmbeddedDatabase } from '../../src/database/embedded-database';
import { ENV_ADMIN_URL, ENV_TEMPLATE, withAdminClient } from './test-database';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  const adminUrl = process.env[ENV_ADMIN_URL];
  const template = process.env[ENV_TEMPLATE];
  const embedded = g.__licenceTestEmbedded as EmbeddedDatabase | undefined;
  if (embedded) {
    await embedded.stop();
  } else if (adminUrl && template) {
    // On a shared server, drop what this run created (each file drops its own; this catches leftovers).
    const prefix = template.replace(/_tpl_/, '_%_').replace(/_[0-9a-f]{8}$/, '_%');
    await withAdminClient(adminUrl, async (client) => {
      await client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
      const { rows } = await client.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE datname LIKE 'licence\\_test\\_%' AND datname LIKE $1`,
        [prefix],
      );
      for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    });
  }
  if (typeof g.__licenceTestWorkDir === 'string') rmSync(g.__licenceTestWorkDir, { recursive: true, force: true });
}
