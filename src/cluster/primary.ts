import cluster, { type Worker } from 'node:cluster';
import { Client } from 'pg';
import type { Runtime } from '../bootstrap';
import { createJobEngine } from '../jobs/job-engine';
import { printGenerated, say, SHUTDOWN_TIMEOUT_MS, type FirstKey } from '../serve';
import { isReadyMessage, WORKER_CONFIG_ENV } from './messages';
import { MetricsAggregator } from '../metrics/cluster-metrics';

/** A worker not listening this long after its fork is stopped and counts as a failed start. */
const WORKER_START_TIMEOUT_MS = 120_000;
/** Replacements that fail their start-up in a row before the primary gives up (exit 1). */
const MAX_FAILED_STARTS = 5;
/** The first replacement waits this long; each further exit within a minute doubles it, up to REPLACE_DELAY_MAX_MS. */
const REPLACE_DELAY_MS = 500;
const REPLACE_DELAY_MAX_MS = 30_000;
/** Connections a worker opens besides its DB_POOL_SIZE: the job engine's pool, and the session store's without Redis. */
const JOB_POOL_SIZE = 4;
const SESSION_POOL_SIZE = 4;

const warn = (line: string) => process.stderr.write(`${line}\n`);

/**
 * WEB_CONCURRENCY > 1: this process is the cluster's primary. prepareRuntime() has run once here (embedded PostgreSQL,
 * secrets, migrations); the primary forks the workers that serve requests on the shared port (node:cluster, round-robin
 * on Linux), runs the job engine's clock and maintenance (the workers only work the queues), aggregates /metrics for
 * them, replaces a worker that dies, and on SIGTERM/SIGINT stops every worker (each drains its in-flight requests),
 * then the job engine and the embedded PostgreSQL, and exits 0.
 */
export async function runPrimary(runtime: Runtime): Promise<void> {
  const { config, workers: count } = runtime;
  if (!config.redisUrl) {
    warn(
      `WEB_CONCURRENCY=${count} without REDIS_URL: rate limits are counted by each worker, so a client spread over them gets up to ` +
        `${count} times each limit. Set REDIS_URL to share the counters (docs/deployment.md).`,
    );
  }
  await checkConnectionBudget(runtime).catch(() => undefined);

  // The engine that turns schedules into jobs and runs pg-boss's maintenance, once for the machine; no queue is worked here.
  const scheduler = createJobEngine(config.databaseUrl, { max: 2, application_name: 'licence-server-scheduler' });
  scheduler.on('error', (err: Error) => warn(`job scheduler: ${err.message}`));
  const schedulerStarted = scheduler.start().catch((err: Error) => warn(`the job scheduler did not start: ${err.message}`));

  const alive = new Set<Worker>();
  const serving = new Set<Worker>();
  const startTimers = new Map<Worker, NodeJS.Timeout>();
  const replaceTimers = new Set<NodeJS.Timeout>();
  const recentExits: number[] = [];
  const firstKeys: FirstKey[] = [];
  let started = false;
  let failedStarts = 0;
  let stopping = false;
  let exitCode = 0;
  let allExited: () => void = () => undefined;
  const aggregator = new MetricsAggregator(() => [...serving]);
  const workerEnv = { [WORKER_CONFIG_ENV]: JSON.stringify(config) };

  const fork = () => {
    const worker = cluster.fork(workerEnv);
    alive.add(worker);
    const timer = setTimeout(() => {
      warn(`Worker ${worker.process.pid} is not listening after ${WORKER_START_TIMEOUT_MS / 1000} s; stopping it`);
      worker.process.kill('SIGKILL');
    }, WORKER_START_TIMEOUT_MS);
    startTimers.set(worker, timer);
  };

  const finish = async (code: number) => {
    for (const timer of replaceTimers) clearTimeout(timer);
    await schedulerStarted;
    await scheduler.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => undefined);
    await runtime.embedded?.stop().catch(() => undefined);
    process.exit(code);
  };

  /** Stops every worker (SIGTERM: each drains, bounded), then the scheduler and the database; exits with `code`. */
  const stopAll = async (code: number) => {
    stopping = true;
    exitCode = code;
    for (const timer of replaceTimers) clearTimeout(timer);
    for (const timer of startTimers.values()) clearTimeout(timer);
    setTimeout(() => {
      warn('Workers took too long to stop; killing them');
      for (const worker of alive) worker.process.kill('SIGKILL');
      void finish(1);
    }, SHUTDOWN_TIMEOUT_MS + 5_000).unref();
    const exited = new Promise<void>((resolve) => (allExited = resolve));
    if (alive.size === 0) allExited();
    for (const worker of alive) worker.process.kill('SIGTERM');
    await exited;
    await finish(exitCode);
  };

  cluster.on('message', (worker, message: unknown) => {
    if (aggregator.handle(worker, message) || !isReadyMessage(message)) return;
    clearTimeout(startTimers.get(worker));
    startTimers.delete(worker);
    serving.add(worker);
    failedStarts = 0;
    if (message.firstKey) firstKeys.push(message.firstKey);
    if (!started && serving.size === count) {
      started = true;
      printGenerated(runtime, firstKeys[0]);
      say(`Licence server listening on http://localhost:${config.port} with ${count} workers (API docs: /api/docs)`);
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    alive.delete(worker);
    clearTimeout(startTimers.get(worker));
    startTimers.delete(worker);
    const wasServing = serving.delete(worker);
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (alive.size === 0) allExited();
      return;
    }
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    if (!wasServing) {
      // A worker that cannot start: at the first start that is the server failing to start (a wrong KEYRING_SECRET, the
      // database refusing connections), as the single process would; later, a replacement that keeps failing.
      if (!started) {
        warn(`Start-up failed: worker ${worker.process.pid} exited before it was listening (${how}); stopping`);
        void stopAll(1);
        return;
      }
      if (++failedStarts >= MAX_FAILED_STARTS) {
        warn(`Worker replacements failed to start ${failedStarts} times in a row (last: ${how}); stopping`);
        void stopAll(1);
        return;
      }
    }
    const now = Date.now();
    recentExits.push(now);
    while (recentExits.length && recentExits[0] < now - 60_000) recentExits.shift();
    const delay = Math.min(REPLACE_DELAY_MS * 2 ** (recentExits.length - 1), REPLACE_DELAY_MAX_MS);
    warn(`Worker ${worker.process.pid} ${wasServing ? 'died' : 'failed to start'} (${how}); starting a replacement in ${delay} ms`);
    const timer = setTimeout(() => {
      replaceTimers.delete(timer);
      if (!stopping) fork();
    }, delay);
    replaceTimers.add(timer);
  });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (stopping) return;
      say(`${signal}: stopping ${alive.size} workers (each finishes its in-flight requests, at most ${SHUTDOWN_TIMEOUT_MS / 1000} s)`);
      void stopAll(0);
    });
  }

  for (let i = 0; i < count; i++) fork();
}

/** Warns when the workers' pools together could exceed the database's max_connections. */
async function checkConnectionBudget({ config, workers }: Runtime): Promise<void> {
  const client = new Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ max_connections: string }>('SHOW max_connections');
    const max = Number(rows[0].max_connections);
    const perWorker = config.dbPoolSize + JOB_POOL_SIZE + (config.redisUrl ? 0 : SESSION_POOL_SIZE);
    const needed = workers * perWorker + 2;
    if (needed > max) {
      warn(
        `WEB_CONCURRENCY=${workers} workers may open ${needed} PostgreSQL connections (${perWorker} each: DB_POOL_SIZE=${config.dbPoolSize} ` +
          `plus the job engine${config.redisUrl ? '' : ' and the session store'}), more than the server's max_connections=${max}: ` +
          'lower DB_POOL_SIZE or WEB_CONCURRENCY, or raise max_connections',
      );
    }
  } finally {
    await client.end();
  }
}
