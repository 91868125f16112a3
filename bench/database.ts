import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../src/database/embedded-database';

export interface BenchDatabase {
  url: string;
  /** The database's name (its backends' command lines show it). */
  name: string;
  /** For the report: where the database runs. */
  kind: 'embedded' | 'BENCH_DATABASE_URL';
  close: () => Promise<void>;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * A fresh, empty database for one benchmark run: a new embedded PostgreSQL cluster under
 * `workDir`, or, with BENCH_DATABASE_URL, a dedicated database created on that server (its
 * default database is only used to create and finally drop ours).
 */
export async function freshDatabase(workDir: string, serverUrl = process.env.BENCH_DATABASE_URL): Promise<BenchDatabase> {
  if (!serverUrl) {
    const embedded = await EmbeddedDatabase.start({ dir: join(workDir, 'postgres'), secretsDir: workDir });
    // Named after this process, so the CPU meter cannot count another benchmark's backends.
    const name = `licence_bench_${process.pid}`;
    const url = await embedded.ensureDatabase(name);
    return { url, name, kind: 'embedded', close: () => embedded.stop() };
  }
  const name = `licence_bench_${Date.now()}_${process.pid}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    kind: 'BENCH_DATABASE_URL',
    close: async () => {
      const client = new Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
