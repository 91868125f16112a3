import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { Agent, get, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { isProcessRunning } from '../../src/database/processes';
import { fingerprint } from '../support/factories';
import { startServer, type ServerProcess } from '../support/server-process';
import { ClusterEnv, createClusterEnv } from './cluster-env';

/**
 * WEB_CONCURRENCY=2 (issue 24, all cores): `node dist/src/main.js` becomes a node:cluster primary with two workers sharing
 * the port. Both the embedded database (the primary owns it) and DATABASE_URL. Run `npm run build` first.
 */

const POOL_SIZE = 7;
const SCHEDULES = ['licenses.expiry-scan', 'mail-sweep', 'seats.sweep', 'stats.fold', 'webhook-sweep'];

async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The pids of `parent`'s children whose command line contains `marker` (from /proc). */
function childrenOf(parent: number, marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids.sort((a, b) => a - b);
}

const workersOf = (server: ServerProcess) => childrenOf(server.pid, 'main.js');

/** Which process holds the server's end of each TCP connection from the given client ports (/proc/net/tcp and fds). */
function ownersOfConnections(serverPort: number, clientPorts: number[], candidates: number[]): Map<number, number> {
  const inodes = new Map<string, number>(); // inode -> client port
  // The server listens on `::` (both families): its IPv4 connections are listed in tcp6.
  const table = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((path) => readFileSync(path, 'utf8').split('\n').slice(1));
  for (const line of table) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const localPort = parseInt(fields[1].split(':')[1], 16);
    const remotePort = parseInt(fields[2].split(':')[1], 16);
    if (localPort === serverPort && clientPorts.includes(remotePort)) inodes.set(fields[9], remotePort);
  }
  const owners = new Map<number, number>(); // client port -> pid
  for (const pid of candidates) {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        const clientPort = match && inodes.get(match[1]);
        if (clientPort) owners.set(clientPort, pid);
      } catch {
        // closed meanwhile
      }
    }
  }
  return owners;
}

/** GET on its own connection (or the agent's); resolves with the status and the client's local port. */
function request(
  url: string,
  agent: Agent | false,
  headers: Record<string, string> = {},
): Promise<{ status: number; port: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent, headers }, (res: IncomingMessage) => {
      const port = res.socket.localPort ?? 0; // read now: a kept-alive socket is detached from the response at its end
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, port, body }));
    }).on('error', reject);
  });
}

/** The value of one series (`name` or `name{labels}`) in Prometheus text; 0 when absent. */
function sample(metrics: string, series: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Processes whose command line contains `marker` (a PostgreSQL of a DATA_DIR). */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

interface Deployment {
  env: Record<string, string>;
  apiKey: () => string;
  databaseUrl: () => string;
  cleanup: () => Promise<void>;
}

function clusterSuite(name: string, deploy: () => Promise<Deployment>, embedded: boolean) {
  describe(name, () => {
    let deployment: Deployment;
    let server: ServerProcess;
    const live = () => `${server.url}/api/v1/health/live`;
    const metrics = async () => {
      const res = await fetch(`${server.url}/metrics`, { headers: { 'x-api-key': deployment.apiKey() } });
      expect(res.status).toBe(200);
      return res.text();
    };
    const query = async <T>(sql: string): Promise<T[]> => {
      const client = new Client({ connectionString: deployment.databaseUrl() });
      await client.connect();
      try {
        return (await client.query(sql)).rows as T[];
      } finally {
        await client.end();
      }
    };

    beforeAll(async () => {
      deployment = await deploy();
      server = await startServer({ ...deployment.env, WEB_CONCURRENCY: '2', DB_POOL_SIZE: String(POOL_SIZE), LOG_LEVEL: 'warn' });
      await waitFor('both workers', () => server.output().includes('with 2 workers'));
    });

    afterAll(async () => {
      if (server) {
        const pids = workersOf(server);
        await server.stop('SIGKILL');
        for (const pid of pids) if (isProcessRunning(pid)) process.kill(pid, 'SIGKILL');
      }
      await deployment?.cleanup();
    });

    it('prints the generated secrets once, in the primary, and does not start PostgreSQL twice', () => {
      const output = server.output();
      expect(output.match(/Licence server listening on/g)).toHaveLength(1);
      expect(output.match(/Applied migrations:/g)).toHaveLength(1);
      if (embedded) {
        expect(output.match(/starting the embedded PostgreSQL/g)).toHaveLength(1);
        expect(output.match(/X-API-Key: lsk_/g)).toHaveLength(1);
        expect(output.match(/A new RSA-2048 signing key \w+ was generated/g)).toHaveLength(1);
        // No REDIS_URL: the per-worker rate limits are announced.
        expect(output).toMatch(/WEB_CONCURRENCY=2 without REDIS_URL: rate limits are counted by each worker/);
      } else {
        expect(output).not.toMatch(/embedded PostgreSQL/);
        expect(output).not.toMatch(/without REDIS_URL/);
      }
    });

    it('serves requests from two worker processes sharing the port', async () => {
      const workers = workersOf(server);
      expect(workers).toHaveLength(2);
      // Four connections at once: the primary hands them to the workers in turn.
      const agent = new Agent({ keepAlive: true, maxSockets: 4 });
      try {
        const answers = await Promise.all([1, 2, 3, 4].map(() => request(live(), agent)));
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
        const owners = ownersOfConnections(
          server.port,
          answers.map((a) => a.port),
          workers,
        );
        expect(new Set(owners.values())).toEqual(new Set(workers));
      } finally {
        agent.destroy();
      }
    });

    it('activates and validates', async () => {
      const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
      const created = await post(
        '/api/v1/admin/licenses',
        { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Cores Co' },
        { 'x-api-key': deployment.apiKey() },
      );
      expect(created.status).toBe(201);
      const { license_key } = (await created.json()) as { license_key: string };
      const seat = { license_key, machine_fingerprint: fingerprint(`cores-${name}`) };
      const activated = await post('/api/v1/activate', { ...seat, hostname: 'till-1' });
      expect(activated.status).toBe(200);
      // Each on a new connection, so both workers answer some of them.
      for (let i = 0; i < 4; i++) {
        const validated = await post('/api/v1/validate', seat, { connection: 'close' });
        expect(await validated.json()).toMatchObject({ valid: true, status: 'active', code: null });
      }
    });

    it('/metrics answers with the sum over both workers, whichever worker gets the scrape', async () => {
      const series = 'http_requests_total{method="GET",route="/api/v1/health/live",status="200"}';
      const before = sample(await metrics(), series);
      const answers = await Promise.all(Array.from({ length: 20 }, () => request(live(), false)));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      // Several scrapes, each on its own connection (so by both workers): every one sees all 20.
      for (let i = 0; i < 4; i++) {
        const text = (await request(`${server.url}/metrics`, false, { 'x-api-key': deployment.apiKey() })).body;
        expect(sample(text, series) - before).toBe(20);
        // Each worker's pool reports its size: the sum says both answered.
        expect(sample(text, 'db_pool_connections_max')).toBe(2 * POOL_SIZE);
      }
    });

    it('stores each schedule once and runs the job clock in the primary only', async () => {
      const schedules = await query<{ name: string; n: number }>(
        'SELECT name, count(*)::int AS n FROM pgboss.schedule GROUP BY name ORDER BY name',
      );
      expect(schedules).toEqual(SCHEDULES.map((s) => ({ name: s, n: 1 })));
      const engines = await query<{ application_name: string; n: number }>(
        `SELECT application_name, count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name LIKE 'licence-server-%' GROUP BY 1`,
      );
      const scheduler = engines.find((e) => e.application_name === 'licence-server-scheduler');
      expect(scheduler?.n).toBeGreaterThanOrEqual(1);
      expect(scheduler?.n).toBeLessThanOrEqual(2);
      // The chained seat sweep stays one chain: at most one waiting whatever the number of workers.
      const waiting = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'seats.sweep' AND state = 'created'`,
      );
      expect(waiting[0].n).toBeLessThanOrEqual(1);
    });

    it('replaces a worker that dies', async () => {
      const [victim, survivor] = workersOf(server);
      process.kill(victim, 'SIGKILL');
      const replacement = await waitFor('a replacement worker', () => {
        const now = workersOf(server);
        return now.length === 2 && !now.includes(victim) && now.find((pid) => pid !== survivor);
      });
      expect(server.output()).toMatch(new RegExp(`Worker ${victim} died \\(signal SIGKILL\\); starting a replacement`));
      // Serving again: the scrape's sum includes the replacement's pool.
      await waitFor('the replacement to serve', async () => {
        const text = await metrics();
        return sample(text, 'db_pool_connections_max') === 2 * POOL_SIZE;
      });
      expect(isProcessRunning(replacement)).toBe(true);
    });

    it('SIGTERM stops every worker and the primary (and the embedded PostgreSQL) with exit code 0', async () => {
      const workers = workersOf(server);
      const postmaster = embedded
        ? Number(readFileSync(join(deployment.env.DATA_DIR, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0])
        : 0;
      if (embedded) expect(isProcessRunning(postmaster)).toBe(true);
      // Requests under way when the signal arrives are answered in full by their worker (as in shutdown.cluster-spec.ts).
      let answeredBeforeSignal!: () => void;
      const firstAnswer = new Promise<void>((r) => (answeredBeforeSignal = r));
      const inFlight = Promise.allSettled(
        Array.from({ length: 20 }, () =>
          request(`${server.url}/api/v1/admin/stats`, false, { 'x-api-key': deployment.apiKey() }).then((r) => {
            answeredBeforeSignal();
            return r.status;
          }),
        ),
      );
      await firstAnswer;
      const started = Date.now();
      const code = await server.stop('SIGTERM');
      const answered = (await inFlight).filter((s) => s.status === 'fulfilled').map((s) => s.value);
      expect(answered.length).toBeGreaterThan(0);
      expect(answered.every((status) => status === 200)).toBe(true);
      expect(code).toBe(0);
      expect(Date.now() - started).toBeLessThan(25_000);
      for (const pid of workers) expect(isProcessRunning(pid)).toBe(false);
      if (embedded) expect(isProcessRunning(postmaster)).toBe(false);
      expect(server.output()).toMatch(/SIGTERM: stopping 2 workers/);
    });
  });
}

clusterSuite(
  'WEB_CONCURRENCY=2 with the embedded database',
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'licence-cores-'));
    chmodSync(dataDir, 0o755);
    const embeddedUrl = () => {
      const port = readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')
        .split('\n')[3]
        .trim();
      const password = readFileSync(join(dataDir, 'postgres-password'), 'utf8').trim();
      return `postgres://postgres:${password}@127.0.0.1:${port}/licence_server`;
    };
    return {
      env: { DATA_DIR: dataDir },
      apiKey: () => readFileSync(join(dataDir, 'api-key'), 'utf8').trim(),
      databaseUrl: embeddedUrl,
      cleanup: async () => {
        // A failed test may have left the primary's PostgreSQL behind.
        for (const pid of processesWith(join(dataDir, 'postgres'))) process.kill(pid, 'SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  true,
);

clusterSuite(
  'WEB_CONCURRENCY=2 with DATABASE_URL',
  async () => {
    const cluster: ClusterEnv = await createClusterEnv();
    return {
      env: cluster.env,
      apiKey: () => cluster.apiKey,
      databaseUrl: () => cluster.databaseUrl,
      cleanup: async () => {
        expect(existsSync(join(cluster.env.DATA_DIR, 'postgres'))).toBe(false);
        await cluster.cleanup();
      },
    };
  },
  false,
);

describe('WEB_CONCURRENCY start-up failures', () => {
  it.each(['0', '65', 'many'])('WEB_CONCURRENCY=%s refuses to start with a message naming it', async (value) => {
    const error = await startServer({ WEB_CONCURRENCY: value, DATA_DIR: '/nonexistent-never-created' }).then(
      () => new Error('expected the start to fail'),
      (err: Error) => err,
    );
    expect(error.message).toMatch(/server exited during start-up/);
    expect(error.message).toMatch(
      /Invalid environment variables:\n {2}WEB_CONCURRENCY: WEB_CONCURRENCY must be auto or a whole number from 1 to 64/,
    );
  });

  it('workers that cannot start (a wrong KEYRING_SECRET) make the primary stop its PostgreSQL and exit 1, not hang', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'licence-cores-bad-'));
    chmodSync(dataDir, 0o755);
    try {
      // A first start creates the keyring under the generated secret; then a different one cannot decrypt it.
      const first = await startServer({ DATA_DIR: dataDir });
      expect(await first.stop('SIGTERM')).toBe(0);
      const error = await startServer({ DATA_DIR: dataDir, WEB_CONCURRENCY: '2', KEYRING_SECRET: 'w'.repeat(40) }).then(
        () => new Error('expected the start to fail'),
        (err: Error) => err,
      );
      expect(error.message).toMatch(/KEYRING_SECRET does not decrypt the active signing key/);
      expect(error.message).toMatch(/Start-up failed: worker \d+ exited before it was listening \(exit code 1\); stopping/);
      expect(processesWith(join(dataDir, 'postgres'))).toEqual([]);
    } finally {
      for (const pid of processesWith(join(dataDir, 'postgres'))) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
