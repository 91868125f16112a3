import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../src/database/embedded-database';

export interface BenchDatabase {
  /** How the server and the baselines connect: through the embedded server's Unix socket when it has one, as npm start does. */
  url: string;
  /** The same database over loopback TCP (the `-tcp` rows), when the database is the embedded one and has a socket. */
  tcpUrl?: string;
  /** The database's name (its backends' command lines show it). */
  name: string;
  /** For the report: where the database runs. */
  kind: 'embedded' | 'BENCH_DATABASE_URL';
  /** Another empty database on the same server (the large scale's), named `<name>_<suffix>`; close() removes it too. */
  sibling: (suffix: string) => Promise<{ url: string; tcpUrl?: string; name: string }>;
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
    const urls = async (db: string) => {
      const url = await embedded.ensureDatabase(db);
      return { url, tcpUrl: embedded.socket.dir ? await embedded.ensureDatabase(db, 'tcp') : undefined, name: db };
    };
    const sibling = (suffix: string) => urls(`${name}_${suffix}`);
    return { ...(await urls(name)), kind: 'embedded', sibling, close: () => embedded.stop() };
  }
  const name = `licence_bench_${Date.now()}_${process.pid}`;
  const created: string[] = [];
  const onServer = async (sql: string) => {
    const client = new Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const create = async (db: string) => {
    await onServer(`CREATE DATABASE ${quoteIdent(db)}`);
    created.push(db);
    const url = new URL(serverUrl);
    url.pathname = `/${db}`;
    return { url: url.toString(), name: db };
  };
  const { url } = await create(name);
  return {
    url,
    name,
    kind: 'BENCH_DATABASE_URL',
    sibling: (suffix) => create(`${name}_${suffix}`),
    close: async () => {
      while (created.length) await onServer(`DROP DATABASE IF EXISTS ${quoteIdent(created.pop() as string)} WITH (FORCE)`);
    },
  };
}
