import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../../src/database/processes';
import { startServer, ServerProcess } from '../../support/server-process';
import { dropDatabase, newDatabaseName, urlFor, withAdminClient } from '../../support/test-database';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * The server as an operator runs it (docs/testing.md, The process tier): the built `node dist/src/main.js` as its own
 * process, configured by environment variables only, on its own database: a fresh one it never shares, created on
 * TEST_DATABASE_URL's server and dropped afterwards, or else the server's own embedded PostgreSQL in a fresh DATA_DIR
 * (the zero-configuration path of `npm start`). Tests talk to it over HTTP and nothing else.
 */
export interface Deployment {
  url: string;
  apiKey: string;
  /** The environment the server was started with (nothing else configures it). */
  env: Record<string, string>;
  server: ServerProcess;
  /** fetch() of a path on the server, as the admin API's client (X-API-Key) when `admin` is set. */
  request: (path: string, init?: RequestInit & { admin?: boolean }) => Promise<Response>;
  /** An admin API call that must answer `status`; returns the parsed body. */
  admin: <T = unknown>(method: string, path: string, body?: unknown, status?: number) => Promise<T>;
  stop: () => Promise<void>;
}

export interface DeploymentOptions {
  /** DATA_DIR (created, and removed by stop()); default a fresh folder under the system's temporary folder. */
  dataDir?: string;
  /** Leave API_KEY unset: the server generates DATA_DIR/api-key on its first start, as `npm start` does. */
  generatedApiKey?: boolean;
  /**
   * 'own' (default): a fresh database on TEST_DATABASE_URL's server, else the embedded PostgreSQL. 'given': none is
   * made, the caller's `extra` holds DATABASE_URL or leaves it unset (the embedded PostgreSQL, whatever TEST_DATABASE_URL says).
   */
  database?: 'own' | 'given';
}

export async function startDeployment(extra: Record<string, string> = {}, options: DeploymentOptions = {}): Promise<Deployment> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'main.js')))
    throw new Error('dist/src/main.js is missing: run `npm run build` (npm run test:process does)');
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'licence-process-'));
  mkdirSync(dataDir, { recursive: true });
  // As root, the embedded PostgreSQL runs as the postgres user, which must be able to enter the folder.
  chmodSync(dataDir, 0o755);
  const adminUrl = options.database === 'given' ? undefined : process.env.TEST_DATABASE_URL;
  const database = adminUrl ? newDatabaseName('process') : undefined;
  if (adminUrl && database) await withAdminClient(adminUrl, (c) => c.query(`CREATE DATABASE "${database}"`));
  let apiKey = `process-test-${randomBytes(12).toString('hex')}`;
  // The port is chosen first so that PUBLIC_URL, the base of every link the server mails, can name it.
  const port = String(await findFreePort());
  const env: Record<string, string> = {
    PORT: port,
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    ...(adminUrl && database ? { DATABASE_URL: urlFor(adminUrl, database) } : {}),
    ...(options.generatedApiKey ? {} : { API_KEY: apiKey }),
    LOG_LEVEL: 'warn',
    ...extra,
  };
  let server: ServerProcess;
  try {
    server = await startServer(env, 120_000);
  } catch (err) {
    if (adminUrl && database) await dropDatabase(adminUrl, database);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  if (options.generatedApiKey) apiKey = readFileSync(join(dataDir, 'api-key'), 'utf8').trim();
  const request = (path: string, init: RequestInit & { admin?: boolean } = {}) => {
    const { admin, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (admin) headers.set('x-api-key', apiKey);
    return fetch(`${server.url}${path}`, { ...rest, headers });
  };
  return {
    url: server.url,
    apiKey,
    env,
    server,
    request,
    async admin<T>(method: string, path: string, body?: unknown, status = method === 'POST' ? 201 : 200): Promise<T> {
      const res = await request(path, {
        method,
        admin: true,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${text}\n${server.output()}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async stop() {
      const code = await server.stop('SIGTERM');
      if (adminUrl && database) await dropDatabase(adminUrl, database);
      rmSync(dataDir, { recursive: true, force: true });
      if (code !== 0) throw new Error(`the server exited with ${code} on SIGTERM:\n${server.output()}`);
    },
  };
}
