import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'pg';
import { projectRoot } from '../src/common/paths';
import { loadOrCreateSigningKey } from '../src/keyring/signing-key';
import { CpuMeters, postgresCpu, processTreeCpu } from './cpu';
import { LoopMeter, loopMeter } from './loop';
import { freshDatabase } from './database';
import { fingerprintOf, licenseKeyOf, SEAT_EVERY } from './dataset';
import { ExportBenchResult, measureExport } from './export';
import { bodyOf, chooseGenerator, LoadOptions, measurePair, RunResult, Scenario, uniqueBodiesFor } from './load';
import { NodeProcess, spawnNode } from './processes';
import { BenchReport, renderText, ScaleResult, ScenarioResult } from './report';
import { statementMeter } from './statement-counter';
import {
  DeliveryCapacity,
  deliveriesFor,
  LagReceiver,
  measureDeliveryCapacity,
  settleLag,
  startLagReceiver,
  WebhookDeliveries,
} from './webhook-receiver';
import { datasetSize, freshPoolStart, loadProducts, productOf, SeedProduct, seedAudit, seedLicenses, vacuumAnalyze } from './seed';

// The built layout is <out>/bench and <out>/src; the project root holds package.json and views/.
const ROOT = projectRoot(__dirname);
/** The fixed request rate at which validate's latency is also measured (50 connections, not saturated). */
const VALIDATE_RATE = 1000;
const MAIN_SCRIPT = join(__dirname, '..', 'src', 'main.js');
/** The rows `--only` can name (validate and activate also run at each --workers count). */
const ROW_NAMES = [
  'stats',
  'licenses',
  'audit',
  'licenses-deep',
  'audit-deep',
  'export',
  'floor',
  'floor-nest',
  'floor-express',
  'validate',
  'validate-hook',
  'validate-signed',
  'validate-rate',
  'heartbeat',
  'usage',
  'license-file',
  'reactivate',
  'reactivate-hook',
  'validate-tcp',
  'reactivate-tcp',
  'activate',
  'activate-plain',
  'activate-60s',
  'deliver',
  'ed25519',
];
/** The long saturated fresh-activation run's length, seconds (issue 60: the lag over a minute, not only over 10 s rounds). */
const LONG_RUN_SECONDS = 60;
/** Events the delivery-capacity row hands the fan-out at once (smoke: fewer, so the smoke run does not grow). */
const CAPACITY_EVENTS = 5_000;
const SMOKE_CAPACITY_EVENTS = 300;
const USAGE = `npm run bench [-- options]
  --duration <s>       seconds per measured run (default 10)
  --runs <n>           measured runs per endpoint, median reported (default 3)
  --warmup <s>         warm-up seconds before the runs (default 5)
  --connections <n>    concurrent connections (default 50)
  --licenses <n>       also measure at this many licences (the large scale, its own database), e.g. 1000000
  --audit <n>          ... and this many audit entries, e.g. 5000000
  --small-licenses <n> licences of the small scale (default 10000)
  --small-audit <n>    audit entries of the small scale (default 50000)
  --only <names>       comma-separated subset of: ${ROW_NAMES.join(',')}
                       (activate-60s, one saturated ${LONG_RUN_SECONDS} s run with a subscriber, is left out of --smoke)
  --generator <name>   wrk (default when installed: one thread, the connections, keep-alive) or autocannon (in the bench
                       process); the fixed-rate row always uses the bench's open-loop paced runner
  --workers <list>     WEB_CONCURRENCY values to measure validate, re-activation and fresh activation at (default 1,2; smoke: 1)
  --profile <dir>      run the servers with node --cpu-prof, writing to <dir>/small and <dir>/large
  --out <file>         results JSON (default bench/results/<date>.json; smoke: a temporary file)
  --smoke              CI mode: small data, 1 s per endpoint, one run, no warm-up; the large scale (if asked)
                       measures only the rows compared across scales and the export
Environment: BENCH_DATABASE_URL=postgres://... to use that server (a dedicated database is created and dropped).`;

interface Options extends LoadOptions {
  smallLicenses: number;
  smallAudit: number;
  largeLicenses?: number;
  largeAudit?: number;
  only?: Set<string>;
  profileDir?: string;
  out?: string;
  smoke: boolean;
  /** wrk's or autocannon's version line, for the report. */
  generatorVersion: string;
  /** WEB_CONCURRENCY values at which validate and fresh activation are measured. */
  workers: number[];
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      runs: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      licenses: { type: 'string' },
      audit: { type: 'string' },
      'small-licenses': { type: 'string' },
      'small-audit': { type: 'string' },
      only: { type: 'string' },
      profile: { type: 'string' },
      out: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      generator: { type: 'string' },
      workers: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const int = (name: string, value: string | undefined, fallback: number | undefined, min: number): number | undefined => {
    if (value === undefined) return fallback;
    const parsed = Number(value.replace(/_/g, ''));
    if (!Number.isFinite(parsed) || parsed < min) throw new Error(`--${name} must be a number >= ${min}`);
    return parsed;
  };
  const smoke = values.smoke;
  const only = values.only ? new Set(values.only.split(',').map((s) => s.trim())) : undefined;
  const unknown = [...(only ?? [])].filter((name) => !ROW_NAMES.includes(name));
  if (unknown.length) throw new Error(`--only: unknown ${unknown.join(', ')} (known: ${ROW_NAMES.join(', ')})`);
  const workers = (values.workers ?? (smoke ? '1' : '1,2')).split(',').map((w) => Number(w.trim()));
  if (workers.some((w) => !Number.isInteger(w) || w < 1)) throw new Error('--workers must be a list of counts >= 1, e.g. 1,2');
  const { generator, version } = chooseGenerator(values.generator);
  const options: Options = {
    smoke,
    generator,
    generatorVersion: version,
    workers: [...new Set(workers)],
    durationSeconds: int('duration', values.duration, smoke ? 1 : 10, 0.5) as number,
    runs: int('runs', values.runs, smoke ? 1 : 3, 1) as number,
    warmupSeconds: int('warmup', values.warmup, smoke ? 0 : 5, 0) as number,
    connections: int('connections', values.connections, 50, 1) as number,
    smallLicenses: int('small-licenses', values['small-licenses'], smoke ? 200 : 10_000, SEAT_EVERY) as number,
    smallAudit: int('small-audit', values['small-audit'], smoke ? 1_000 : 50_000, 0) as number,
    largeLicenses: int('licenses', values.licenses, undefined, SEAT_EVERY),
    largeAudit: int('audit', values.audit, undefined, 0),
    only,
    profileDir: values.profile ? resolve(values.profile) : undefined,
    out: values.out ? resolve(values.out) : undefined,
  };
  return options;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** A progress line that rewrites itself on a terminal and prints every ~10 % otherwise. */
function progressBar(label: string) {
  const started = Date.now();
  let lastTenth = -1;
  return (done: number, total: number) => {
    const fraction = total === 0 ? 1 : done / total;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const text = `  ${label} ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} (${Math.round(fraction * 100)} %) ${seconds} s`;
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round(fraction * width);
      process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]${text}${done >= total ? '\n' : ''}`);
    } else if (Math.floor(fraction * 10) > lastTenth || done >= total) {
      lastTenth = Math.floor(fraction * 10);
      log(text);
    }
  };
}

function gitCommit(): string {
  try {
    const commit = execSync('git rev-parse --short HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const dirty = execSync("git status --porcelain -- src bench ':!bench/results'", { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    return dirty ? `${commit}+uncommitted` : commit;
  } catch {
    return 'unknown';
  }
}

/** Picks `count` distinct-ish random items by index; the list of seats can be large. */
function sample<T>(size: number, count: number, make: (i: number) => T): T[] {
  if (size <= count) return Array.from({ length: size }, (_, i) => make(i));
  return Array.from({ length: count }, () => make(Math.floor(Math.random() * size)));
}

/** A server under test or a baseline: where it listens, its process and what its CPU meters read. */
interface Endpoint {
  url: string;
  process: NodeProcess;
  cpu: CpuMeters;
  /** The event loop's delay and GC pauses over each run (a single-process server's /metrics). */
  loop?: LoopMeter;
}

interface Servers {
  app: Endpoint;
  baseline: Endpoint;
  apiKey: string;
}

/** A failed measurement, with the output of any of the processes that died meanwhile. */
async function explainFailure<T>(measuring: Promise<T>, endpoints: Endpoint[]): Promise<T> {
  try {
    return await measuring;
  } catch (err) {
    const dead = endpoints.filter((e) => e.process.exited());
    if (!dead.length) throw err;
    const output = dead.map((e) => `\n--- last output of ${e.url} (exited) ---\n${e.process.output().slice(-5000)}`).join('');
    throw new Error(`${(err as Error).message}${output}`, { cause: err });
  }
}

/** A JSON answer as the preflight checks read it (an object's fields; arrays are objects too); `{}` when it was not JSON. */
type ResponseBody = Partial<Record<string, unknown>>;

/**
 * Sends one request of the scenario and checks the answer, so a misconfigured run fails before measuring.
 * A network error is retried: fetch keeps idle connections, and one the server closes at its keep-alive
 * timeout just as it is reused fails the request ("fetch failed"). A server that died is reported with its output.
 */
async function preflight(
  url: string,
  scenario: Scenario,
  check: (status: number, body: ResponseBody) => boolean,
  label: string,
  server?: NodeProcess,
): Promise<void> {
  let res: Response | undefined;
  // A fresh-activation check uses up one licence of the pool (sized with room for it).
  const body = bodyOf(scenario);
  for (let attempt = 1; !res; attempt++) {
    try {
      res = await fetch(url + scenario.path, {
        method: scenario.method,
        headers: { 'content-type': 'application/json', ...scenario.headers },
        body: body?.(),
      });
    } catch (err) {
      if (attempt >= 3 || server?.exited()) {
        const output = server ? `\n--- last output of the server ---\n${server.output().slice(-5000)}` : '';
        const cause = (err as Error).cause;
        throw new Error(`${label}: ${(err as Error).message} (${cause instanceof Error ? cause.message : ''})${output}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const text = await res.text();
  let parsed: ResponseBody;
  try {
    parsed = JSON.parse(text) as ResponseBody;
  } catch {
    parsed = {};
  }
  if (!check(res.status, parsed)) throw new Error(`${label}: unexpected answer ${res.status} ${text.slice(0, 500)}`);
}

/**
 * The steady state of a client that checks in more than once per LAST_SEEN_INTERVAL: its seat is fresh, so
 * validate is the read path. Without this, the seeded seats are all stale and the first check of each of the
 * 50,000 sampled seats also writes (an UPDATE and a WAL flush): 1,000 seats at small scale but 50,000 at large
 * would compare different workloads, not different table sizes. The refresh write is measured by activate.
 */
async function refreshSeats(pool: Pool): Promise<void> {
  await pool.query('UPDATE activations SET last_seen_at = now() WHERE released_at IS NULL');
  await pool.query('VACUUM (ANALYZE) activations');
}

/**
 * The path of a page near the end of a list, by keyset cursor: one request with `offset` two pages before the
 * end, whose `Link: <...>; rel="next"` header carries the cursor of the last full page. Undefined when the
 * answer has no such header (a server without keyset pagination).
 */
async function deepPagePath(servers: Servers, path: string, rows: number): Promise<string | undefined> {
  const res = await fetch(`${servers.app.url}${path}&offset=${Math.max(0, rows - 200)}`, { headers: { 'x-api-key': servers.apiKey } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path}&offset=...: answered ${res.status}`);
  const next = /<([^>]+)>\s*;\s*rel="?next"?/.exec(res.headers.get('link') ?? '');
  if (!next) return undefined;
  const url = new URL(next[1], servers.app.url);
  return url.pathname + url.search;
}

/** PostgreSQL statements per second the server sends with no request to answer, over `seconds`. */
async function idleStatements(meters: CpuMeters, seconds: number): Promise<number | undefined> {
  const read = () => [...(meters.statements?.()?.values() ?? [])].reduce((sum, n) => sum + n, 0);
  const before = read();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return meters.statements ? Math.round(((read() - before) / seconds) * 10) / 10 : undefined;
}

interface MeasuredScale {
  result: ScaleResult;
  requests: Record<string, Scenario>;
}

const seatBody = (s: { key: string; fingerprint: string }, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ license_key: s.key, machine_fingerprint: s.fingerprint, ...extra });

async function measureScale(
  index: number,
  name: string,
  target: { licenses: number; audit: number },
  { pool, products, servers, startWorkers, startTcp }: ScaleServers,
  options: Options,
): Promise<MeasuredScale> {
  log(`\n== ${name} scale: ${target.licenses.toLocaleString('en-US')} licences, ${target.audit.toLocaleString('en-US')} audit entries`);
  const seedStarted = Date.now();
  // Each scale has its own database, seeded from empty.
  await seedLicenses(pool, products, 1, target.licenses, false, progressBar('licences'));
  if (target.audit > 0) await seedAudit(pool, products, 1, target.audit, target.audit, progressBar('audit entries'));
  log('  VACUUM ANALYZE, CHECKPOINT');
  await vacuumAnalyze(pool);
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  const dataset = await datasetSize(pool);
  // What the idle server sends (the fan-out's poll, the job queue's polls): part of every row's statements per request.
  const idleStatementsPerSecond = await idleStatements(servers.app.cpu, options.smoke ? 1 : 5);
  log(`  idle server: ${idleStatementsPerSecond ?? '?'} PostgreSQL statements per second`);

  const admin = { 'x-api-key': servers.apiKey };
  const seatCount = Math.floor(target.licenses / SEAT_EVERY);
  const seats = sample(seatCount, 50_000, (i) => {
    const n = (i + 1) * SEAT_EVERY;
    return { n, key: licenseKeyOf(productOf(products, n).keyPrefix, n), fingerprint: fingerprintOf(n), seatId: 0 };
  });
  // The activation baseline writes the seat row itself, by id.
  const { rows: seatRows } = await pool.query<{ id: string; machine_fingerprint: string }>(
    'SELECT id, machine_fingerprint FROM activations WHERE released_at IS NULL AND machine_fingerprint = ANY($1::text[])',
    [[...new Set(seats.map((s) => s.fingerprint))]],
  );
  const seatIds = new Map(seatRows.map((r) => [r.machine_fingerprint, Number(r.id)]));
  for (const s of seats) s.seatId = seatIds.get(s.fingerprint) ?? 0;
  // The bodies, built once: every request sends one of them, picked at random.
  const activation = (s: (typeof seats)[number]) => ({ hostname: `host-${s.n}`, os: 'Linux', app_version: '1.0.0' });
  const validateBodies = seats.map((s) => seatBody(s));
  const signedValidateBodies = seats.map((s) => seatBody(s, { nonce: randomBytes(18).toString('base64url') }));
  const activateBodies = seats.map((s) => seatBody(s, activation(s)));
  const baselineActivateBodies = seats.map((s) => seatBody(s, { ...activation(s), seat_id: s.seatId }));

  const scenarios: Record<string, ScenarioResult> = {};
  const notes: string[] = [];
  /** What each scenario sent, to measure it again against the other scale (compareScales). */
  const requests: Record<string, Scenario> = {};
  const onRun = (label: string) => (who: 'target' | 'baseline', i: number, r: RunResult) =>
    log(
      `  ${label} ${who === 'baseline' ? '(baseline)' : ''} run ${i + 1}: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
        `CPU per request: server ${r.cpu.serverUs ?? '?'} µs, PostgreSQL ${r.cpu.databaseUs ?? '?'} µs, ` +
        `load generator (${r.generator}) ${r.cpu.loadGeneratorUs ?? '?'} µs = ${r.cpu.loadGeneratorShare ?? '?'} % of the machine` +
        (r.cpu.statements === undefined ? '' : `, ${r.cpu.statements} PostgreSQL statements per request`) +
        (r.loop
          ? `; event loop delay p99 ${r.loop.lagP99Ms} ms, max ${r.loop.lagMaxMs} ms, ` +
            `GC ${r.loop.gcMs} ms in ${r.loop.gcPauses} pauses (${r.loop.gcPausesOver10Ms} of 10 ms or more)`
          : '') +
        (r.failures ? `, ${r.failures} FAILED ${JSON.stringify(r.statuses)}` : ''),
    );
  const failureWarning = (target: { runs: RunResult[] }) => {
    const failed = target.runs.reduce((sum, r) => sum + r.failures, 0);
    const repeated = target.runs.reduce((sum, r) => sum + (r.repeatedBodies ?? 0), 0);
    return (
      [
        failed ? `${failed} requests failed (${JSON.stringify(target.runs.map((r) => r.statuses))})` : '',
        repeated ? `${repeated} requests reused a fresh licence wrk had already sent (re-activations)` : '',
      ]
        .filter(Boolean)
        .join('; ') || undefined
    );
  };
  const wanted = (key: string) => options.only?.has(key) ?? true;

  const reads: [string, string, string][] = [
    ['stats', 'GET /api/v1/admin/stats', '/api/v1/admin/stats'],
    ['licenses', 'GET /api/v1/admin/licenses?limit=100', '/api/v1/admin/licenses?limit=100'],
    ['audit', 'GET /api/v1/admin/audit?limit=100', '/api/v1/admin/audit?limit=100'],
  ];
  // A page near the end by keyset cursor: it should cost what the first page costs.
  for (const [key, list, rows] of [
    ['licenses-deep', '/api/v1/admin/licenses?limit=100', dataset.licenses],
    ['audit-deep', '/api/v1/admin/audit?limit=100', dataset.audit],
  ] as const) {
    if (!wanted(key)) continue;
    const path = await deepPagePath(servers, list, rows);
    if (path) reads.push([key, `GET ${list.split('?')[0]}?limit=100&after=<cursor> (last page of ${rows.toLocaleString('en-US')})`, path]);
    else {
      notes.push(`${key} skipped: ${list}&offset=... answered without a Link rel="next" header (no keyset pagination in this build)`);
      log(`  NOTE ${notes[notes.length - 1]}`);
    }
  }
  for (const [key, label, path] of reads) {
    if (!wanted(key)) continue;
    const scenario: Scenario = { method: 'GET', path, headers: admin };
    await preflight(servers.app.url, scenario, (status, body) => status === 200 && Array.isArray(body), label, servers.app.process);
    log(`  ${label}`);
    const { target: m } = await explainFailure(
      measurePair({ url: servers.app.url, scenario, meters: servers.app.cpu, loop: servers.app.loop }, undefined, options, onRun(label)),
      [servers.app],
    );
    scenarios[key] = { label, target: m, warning: failureWarning(m) };
    requests[key] = scenario;
  }

  let exportResult: ExportBenchResult | undefined;
  if (wanted('export')) {
    // Before the fresh-activation licences are seeded: the export then has exactly the scale's licences.
    log(`  GET /api/v1/admin/licenses/export?format=csv (${dataset.licenses.toLocaleString('en-US')} rows)`);
    exportResult = await measureExport(servers.app.url, servers.apiKey, servers.app.process.pid, dataset.licenses);
    log(
      `  export: ${exportResult.rows} rows in ${exportResult.seconds} s (${exportResult.rowsPerSecond} rows/s, ${Math.round(exportResult.bytes / 1024)} KiB); ` +
        `server RSS ${exportResult.rssBeforeMiB} MiB before, peak ${exportResult.rssPeakMiB} MiB (+${exportResult.rssGrowthMiB} MiB)` +
        (exportResult.warning ? `; WARNING ${exportResult.warning}` : ''),
    );
  }

  /** The endpoint and its baseline, run alternately; `withRatio` false when both run at a fixed rate (the ratio is 1 by design). */
  const paired = async (
    key: string,
    label: string,
    scenario: Scenario,
    baselineLabel: string,
    baseline: Scenario,
    check: (status: number, body: ResponseBody) => boolean,
    { withRatio = true, on = servers }: { withRatio?: boolean; on?: Servers } = {},
  ) => {
    await preflight(on.app.url, scenario, check, label, on.app.process);
    await preflight(on.baseline.url, baseline, (status) => status === 200, baselineLabel, on.baseline.process);
    log(`  ${label} vs ${baselineLabel}`);
    const m = await explainFailure(
      measurePair(
        { url: on.app.url, scenario, meters: on.app.cpu, loop: on.app.loop },
        { url: on.baseline.url, scenario: baseline, meters: on.baseline.cpu },
        options,
        onRun(label),
      ),
      [on.app, on.baseline],
    );
    const result: ScenarioResult = {
      label,
      target: m.target,
      baseline: { label: baselineLabel, ...(m.baseline as NonNullable<typeof m.baseline>) },
      ratio: withRatio ? Math.round((m.target.median.rps / (m.baseline?.median.rps ?? NaN)) * 100) / 100 : undefined,
      warning: failureWarning(m.target),
    };
    scenarios[key] = result;
    requests[key] = scenario;
    return result;
  };

  const validateCheck = (status: number, body: ResponseBody) => status === 200 && body.valid === true;
  const signedCheck = (status: number, body: ResponseBody) => status === 200 && String(body.signature).startsWith('RSA-SHA256:');
  const baselineValidate: Scenario = { method: 'POST', path: '/validate', bodies: validateBodies };
  const baselineActivate: Scenario = { method: 'POST', path: '/activate', bodies: baselineActivateBodies };
  const workersSuffix = (n: number) => (n === 1 ? '' : ` (${n} workers)`);
  const validateRow = (n: number, on: Servers) =>
    paired(
      n === 1 ? 'validate' : `validate-${n}w`,
      `POST /api/v1/validate${workersSuffix(n)}`,
      { method: 'POST', path: '/api/v1/validate', bodies: validateBodies },
      `bare node:http + pg SELECT${workersSuffix(n)}`,
      baselineValidate,
      validateCheck,
      { on },
    );
  const withOneWorker = options.workers.includes(1);
  const addWarning = (r: ScenarioResult, text: string) => (r.warning = [r.warning, text].filter(Boolean).join('; '));

  /**
   * Runs `work` with one webhook endpoint subscribed to `events`, pointed at a lag receiver. `deliveries()` waits until
   * every event so far is fanned out, then counts the deliveries created for the endpoint since `work` began, by event
   * type: the endpoint takes no event from before its creation, and its own `webhook.created` is counted beforehand.
   */
  const withEndpoint = async <T>(
    on: Servers,
    events: string[],
    description: string,
    work: (receiver: LagReceiver, deliveries: () => Promise<WebhookDeliveries>) => Promise<T>,
  ): Promise<T> => {
    const receiver = await startLagReceiver();
    try {
      const hook = await fetch(`${on.app.url}/api/v1/admin/webhooks`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, events, description }),
      });
      if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status} ${await hook.text()}`);
      const hookId = ((await hook.json()) as { id: number }).id;
      try {
        const before = await deliveriesFor(pool, hookId);
        const since = async (): Promise<WebhookDeliveries> => {
          const after = await deliveriesFor(pool, hookId);
          const byType = Object.fromEntries(
            Object.entries(after.byType)
              .map(([type, n]) => [type, n - (before.byType[type] ?? 0)] as const)
              .filter(([, n]) => n > 0),
          );
          return { created: after.created - before.created, byType };
        };
        return await work(receiver, since);
      } finally {
        await fetch(`${on.app.url}/api/v1/admin/webhooks/${hookId}`, { method: 'DELETE', headers: admin });
      }
    } finally {
      await receiver.close();
    }
  };

  if (['validate', 'validate-hook', 'validate-signed', 'validate-rate'].some(wanted)) await refreshSeats(pool);
  if (wanted('floor')) {
    // What the stack costs before any work: every middleware, the Nest pipeline and a JSON answer, no database.
    // Its ratio bounds what validate can reach against a baseline that does its SELECT in less.
    await paired(
      'floor',
      'GET /api/v1/health/live (framework floor)',
      { method: 'GET', path: '/api/v1/health/live' },
      'bare node:http answering JSON',
      { method: 'GET', path: '/health' },
      (status, body) => status === 200 && body.status === 'ok',
    );
  }
  // The stack's own floor (docs/performance.md, What bounds the floor): the same answer from an empty NestJS app and
  // from Express alone, each its own process, against the same bare baseline in the same run.
  const stackFloors = [
    ['floor-nest', 'nest', 'GET /api/v1/health/live on an empty NestJS + Express app (the stack floor)'],
    ['floor-express', 'express', 'GET /api/v1/health/live on Express alone (one route)'],
  ] as const;
  for (const [key, stack, label] of stackFloors) {
    if (!wanted(key)) continue;
    const floorApp = await spawnNode({
      script: join(__dirname, 'stack-floor-server.js'),
      cwd: ROOT,
      readyPath: '/api/v1/health/live',
      env: { STACK: stack },
    });
    try {
      const app: Endpoint = {
        url: floorApp.url,
        process: floorApp,
        cpu: { server: processTreeCpu(floorApp.pid), database: () => new Map() },
      };
      await paired(
        key,
        label,
        { method: 'GET', path: '/api/v1/health/live' },
        'bare node:http answering JSON',
        { method: 'GET', path: '/health' },
        (status, body) => status === 200 && body.status === 'ok',
        { on: { ...servers, app } },
      );
    } finally {
      await floorApp.stop();
    }
  }
  if (wanted('validate') && withOneWorker) await validateRow(1, servers);
  if (wanted('validate-hook') && withOneWorker) {
    // The same reads with an endpoint subscribed to everything: a validation records no event, so a subscriber must cost nothing.
    await withEndpoint(servers, ['*'], 'bench: validate with a subscriber', async (_, deliveries) => {
      const r = await paired(
        'validate-hook',
        'POST /api/v1/validate (one webhook endpoint subscribed to *)',
        { method: 'POST', path: '/api/v1/validate', bodies: validateBodies },
        'bare node:http + pg SELECT',
        baselineValidate,
        validateCheck,
      );
      r.webhookDeliveries = await deliveries();
      if (r.webhookDeliveries.created > 0) addWarning(r, `${r.webhookDeliveries.created} webhook deliveries created (expected none)`);
    });
  }
  if (wanted('validate-signed')) {
    // docs/client-api.md, Signed validation: with a nonce the answer is signed, so the row costs a SELECT and an RSA signature.
    await paired(
      'validate-signed',
      'POST /api/v1/validate with a nonce (signed answer)',
      { method: 'POST', path: '/api/v1/validate', bodies: signedValidateBodies },
      'bare node:http + pg SELECT + RSA sign',
      { method: 'POST', path: '/validate-signed', bodies: signedValidateBodies },
      (status, body) => validateCheck(status, body) && signedCheck(status, body),
    );
  }
  if (wanted('validate-rate')) {
    // Saturated, 50 connections queue by Little's law (p50 = 50 / req/s); at a fixed rate the latency is the server's own.
    const label = `POST /api/v1/validate at ${VALIDATE_RATE.toLocaleString('en-US')} req/s`;
    const scenario: Scenario = { method: 'POST', path: '/api/v1/validate', bodies: validateBodies, rate: VALIDATE_RATE };
    // The baseline at the same rate tells the machine's own tail (scheduling, the load generator) from the server's.
    await paired(
      'validate-rate',
      label,
      scenario,
      `bare node:http + pg SELECT at ${VALIDATE_RATE.toLocaleString('en-US')} req/s`,
      { ...baselineValidate, rate: VALIDATE_RATE },
      validateCheck,
      { withRatio: false },
    );
  }
  if (wanted('heartbeat')) {
    // Writes on every call (docs/client-api.md, Heartbeat), so the baseline's one UPDATE (and its WAL flush) is the fair comparison.
    await paired(
      'heartbeat',
      'POST /api/v1/heartbeat',
      { method: 'POST', path: '/api/v1/heartbeat', bodies: validateBodies },
      'bare node:http + pg UPDATE',
      { method: 'POST', path: '/heartbeat', bodies: validateBodies },
      validateCheck,
    );
  }
  if (wanted('usage')) {
    // docs/client-api.md, Usage: the benchmarked seats' licences metered (a cap no run reaches), so every call counts
    // one use through the atomic upsert; the baseline is the same upsert alone, behind the bare server.
    await pool.query(
      `UPDATE licenses l SET policy = l.policy || '{"max_uses": 1000000000000, "uses_period": "month"}'
       FROM activations a WHERE a.license_id = l.id AND a.released_at IS NULL AND a.machine_fingerprint = ANY($1::text[])`,
      [[...new Set(seats.map((s) => s.fingerprint))]],
    );
    await paired(
      'usage',
      'POST /api/v1/usage (metered licence, increment 1)',
      { method: 'POST', path: '/api/v1/usage', bodies: validateBodies },
      'bare node:http + pg locked increment (upsert)',
      { method: 'POST', path: '/usage', bodies: validateBodies },
      (status, body) => status === 200 && typeof body.uses === 'number',
    );
  }
  if (wanted('license-file')) {
    // docs/client-api.md, Licence file: the seat's licence, signed, and an audit entry written before the answer (one write, one signature).
    await paired(
      'license-file',
      'POST /api/v1/license-file',
      { method: 'POST', path: '/api/v1/license-file', bodies: validateBodies },
      'bare node:http + locked UPDATE + RSA sign',
      baselineActivate,
      (status, body) => status === 200 && String(body.license_file).startsWith('-----BEGIN LICENSE FILE-----'),
    );
  }
  let signingRps: number | undefined;
  const reactivateScenario: Scenario = { method: 'POST', path: '/api/v1/activate', bodies: activateBodies };
  const reactivateRow = (n: number, on: Servers) =>
    paired(
      n === 1 ? 'reactivate' : `reactivate-${n}w`,
      `POST /api/v1/activate (re-activation)${workersSuffix(n)}`,
      reactivateScenario,
      `bare node:http + locked UPDATE + RSA sign${workersSuffix(n)}`,
      baselineActivate,
      signedCheck,
      { on },
    );
  if (wanted('reactivate') && withOneWorker) signingRps = (await reactivateRow(1, servers)).baseline?.median.rps;
  if (wanted('reactivate-hook')) {
    // Re-activating a bound machine changes nothing, so it records no event: with an endpoint subscribed to
    // everything the row must cost what `reactivate` costs and create no delivery (docs/webhooks.md, The event spine).
    await withEndpoint(servers, ['*'], 'bench: re-activation sends nothing', async (_, deliveries) => {
      const r = await paired(
        'reactivate-hook',
        'POST /api/v1/activate (re-activation, one webhook endpoint subscribed to *)',
        { method: 'POST', path: '/api/v1/activate', bodies: activateBodies },
        'bare node:http + locked UPDATE + RSA sign',
        baselineActivate,
        signedCheck,
      );
      signingRps ??= r.baseline?.median.rps;
      r.webhookDeliveries = await deliveries();
      if (r.webhookDeliveries.created > 0) addWarning(r, `${r.webhookDeliveries.created} webhook deliveries created (expected none)`);
    });
  }

  // The server's database connection over its Unix socket (as npm start connects to the embedded PostgreSQL) against
  // the same server code over loopback TCP, alternating run by run (docs/performance.md, Performance round 3).
  const transportRows = [
    ['validate-tcp', 'POST /api/v1/validate', { method: 'POST', path: '/api/v1/validate', bodies: validateBodies }, validateCheck],
    ['reactivate-tcp', 'POST /api/v1/activate (re-activation)', reactivateScenario, signedCheck],
  ] as const;
  if (transportRows.some(([key]) => wanted(key)) && withOneWorker) {
    if (!startTcp) {
      notes.push(
        'validate-tcp and reactivate-tcp skipped: the database has no Unix socket (BENCH_DATABASE_URL, or a data folder path too long)',
      );
      log(`  NOTE ${notes[notes.length - 1]}`);
    } else {
      log('  starting a second server connecting to the same database over loopback TCP');
      const tcp = await startTcp();
      try {
        for (const [key, what, scenario, check] of transportRows) {
          if (!wanted(key)) continue;
          if (key === 'validate-tcp') await refreshSeats(pool);
          const label = `${what} over loopback TCP`;
          await preflight(tcp.app.url, scenario, check, label, tcp.app.process);
          await preflight(servers.app.url, scenario, check, `${what} over the Unix socket`, servers.app.process);
          log(`  ${label} vs the same over the Unix socket`);
          const m = await explainFailure(
            measurePair(
              { url: tcp.app.url, scenario, meters: tcp.app.cpu, loop: tcp.app.loop },
              { url: servers.app.url, scenario, meters: servers.app.cpu },
              options,
              onRun(label),
            ),
            [tcp.app, servers.app],
          );
          const socket = m.baseline as NonNullable<typeof m.baseline>;
          scenarios[key] = {
            label,
            target: m.target,
            baseline: { label: `${what} over the Unix socket`, ...socket },
            ratio: Math.round((m.target.median.rps / socket.median.rps) * 100) / 100,
            warning: failureWarning(m.target),
          };
          const cpu = (x: typeof socket) => `${x.median.serverUs ?? '?'}+${x.median.databaseUs ?? '?'} µs/req at ${x.median.rps} req/s`;
          notes.push(`${key}: ${what}, alternating: over the Unix socket ${cpu(socket)}, over loopback TCP ${cpu(m.target)}`);
          log(`  NOTE ${notes[notes.length - 1]}`);
        }
      } finally {
        await tcp.stop();
      }
    }
  }

  let nextFresh = freshPoolStart(index);
  /**
   * Fresh activation: each request binds a licence never activated before, from a pool sized from the signing ceiling.
   * With `webhook` (the default row) one endpoint is subscribed to license.activated, so the row also measures the
   * outbox and the delivery lag under the load; `activate-plain` measures the same without any endpoint; `long` is one
   * saturated run of LONG_RUN_SECONDS with the endpoint, no baseline (the lag over a minute: activate-60s).
   */
  const activateRow = async (n: number, on: Servers, mode: 'hook' | 'plain' | 'long' = 'hook') => {
    const webhook = mode !== 'plain';
    // A minute at the signing ceiling would seed hundreds of thousands of licences: the long run sizes its pool from the
    // fresh-activation rate measured just before, three times over.
    const measured = mode === 'long' ? scenarios.activate?.target.median.rps : undefined;
    const ceiling = measured ? Math.ceil(measured * 3) : (signingRps ?? 4_000) * n;
    const runSeconds =
      mode === 'long'
        ? [LONG_RUN_SECONDS]
        : [...(options.warmupSeconds > 0 ? [options.warmupSeconds] : []), ...Array<number>(options.runs).fill(options.durationSeconds)];
    const poolSize = runSeconds.reduce((sum, seconds) => sum + uniqueBodiesFor(seconds, ceiling), 1_000);
    const start = nextFresh;
    nextFresh += poolSize;
    await seedLicenses(pool, products, start, start + poolSize - 1, true, progressBar('fresh-activation licences'));
    await pool.query('ANALYZE licenses');
    let next = 0;
    let exhausted = false;
    const nextBody = () => {
      if (next >= poolSize) exhausted = true;
      const k = start + (next++ % poolSize);
      return JSON.stringify({
        license_key: licenseKeyOf(productOf(products, k).keyPrefix, k),
        machine_fingerprint: fingerprintOf(k),
        hostname: `host-${k}`,
        os: 'Linux',
        app_version: '1.0.0',
      });
    };
    if (!webhook) {
      const plain = await paired(
        'activate-plain',
        `POST /api/v1/activate (fresh licence, no webhook endpoint)${workersSuffix(n)}`,
        { method: 'POST', path: '/api/v1/activate', nextBody, uniquePerSecond: ceiling },
        `bare node:http + locked UPDATE + RSA sign${workersSuffix(n)}`,
        baselineActivate,
        signedCheck,
        { on },
      );
      if (exhausted) plain.warning = `the pool of ${poolSize} fresh licences ran out: later requests were re-activations`;
      return;
    }
    if (mode === 'long') {
      const label = `POST /api/v1/activate (fresh licence, one webhook endpoint), one ${LONG_RUN_SECONDS} s saturated run`;
      await withEndpoint(on, ['license.activated'], 'bench: delivery lag over a minute', async (receiver) => {
        const scenario: Scenario = { method: 'POST', path: '/api/v1/activate', nextBody, uniquePerSecond: ceiling };
        await preflight(on.app.url, scenario, signedCheck, label, on.app.process);
        log(`  ${label}`);
        const long = { ...options, warmupSeconds: 0, runs: 1, durationSeconds: LONG_RUN_SECONDS };
        const m = await explainFailure(
          measurePair({ url: on.app.url, scenario, meters: on.app.cpu, loop: on.app.loop }, undefined, long, onRun(label)),
          [on.app],
        );
        const r: ScenarioResult = { label, target: m.target, warning: failureWarning(m.target) };
        scenarios['activate-60s'] = r;
        if (exhausted) addWarning(r, `the pool of ${poolSize} fresh licences ran out: later requests were re-activations`);
        r.webhookLag = await settleLag(pool, receiver.lags);
        log(`  webhook delivery lag over ${LONG_RUN_SECONDS} s: ${JSON.stringify(r.webhookLag)}`);
        if (r.webhookLag.pendingAfterWait > 0)
          addWarning(r, `${r.webhookLag.pendingAfterWait} webhook deliveries still pending after the wait`);
      });
      return;
    }
    // One endpoint subscribed to license.activated: the row also measures the outbox, and the delivery lag under it.
    await withEndpoint(on, ['license.activated'], 'bench: delivery lag', async (receiver) => {
      const r = await paired(
        n === 1 ? 'activate' : `activate-${n}w`,
        `POST /api/v1/activate (fresh licence, one webhook endpoint)${workersSuffix(n)}`,
        { method: 'POST', path: '/api/v1/activate', nextBody, uniquePerSecond: ceiling },
        `bare node:http + locked UPDATE + RSA sign${workersSuffix(n)}`,
        baselineActivate,
        signedCheck,
        { on },
      );
      if (exhausted) addWarning(r, `the pool of ${poolSize} fresh licences ran out: later requests were re-activations`);
      log('  webhook deliveries: waiting until none is pending');
      r.webhookLag = await settleLag(pool, receiver.lags);
      log(`  webhook delivery lag: ${JSON.stringify(r.webhookLag)}`);
      if (r.webhookLag.pendingAfterWait > 0)
        addWarning(r, `${r.webhookLag.pendingAfterWait} webhook deliveries still pending after the wait`);
    });
  };
  if (wanted('activate') && withOneWorker) await activateRow(1, servers);
  if (wanted('activate-plain') && withOneWorker) await activateRow(1, servers, 'plain');
  // A minute of saturation with a subscriber: whether deliveries keep pace, not only catch up after a 10 s round.
  if ((options.smoke ? options.only?.has('activate-60s') : wanted('activate-60s')) && withOneWorker) await activateRow(1, servers, 'long');
  let delivery: DeliveryCapacity | undefined;
  if (wanted('deliver') && withOneWorker) {
    // The delivery pipeline's own capacity (docs/performance.md, Webhook delivery capacity): a backlog of events at once
    // to a receiver that answers at once, beside the events a saturated server produces (the `activate` row).
    const events = options.smoke ? SMOKE_CAPACITY_EVENTS : CAPACITY_EVENTS;
    delivery = await withEndpoint(servers, ['license.activated'], 'bench: delivery capacity', async (receiver) => {
      log(`  webhook delivery capacity: ${events.toLocaleString('en-US')} events written to the outbox at once`);
      return measureDeliveryCapacity(pool, receiver, events, servers.app.cpu);
    });
    const produced = scenarios.activate?.target.median.rps;
    if (produced) Object.assign(delivery, { producedPerSecond: produced, ratio: Math.round((delivery.perSecond / produced) * 100) / 100 });
    log(`  webhook delivery capacity: ${JSON.stringify(delivery)}`);
    if (delivery.pendingAfterWait > 0) notes.push(`deliver: ${delivery.pendingAfterWait} deliveries still pending after the wait`);
  }
  if (wanted('ed25519') && withOneWorker) {
    // docs/signing.md, Ed25519 keys: re-activation and signed validate while an Ed25519 key signs, against the same RSA
    // baseline as their RSA rows (reactivate, validate-signed), so the two ratios compare the algorithms. Rotates back to
    // RSA afterwards: the rows after this one sign with RSA as before.
    const rotate = async (body: unknown) => {
      const res = await fetch(`${servers.app.url}/api/v1/admin/signing-keys/rotate`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`rotate: ${res.status} ${await res.text()}`);
    };
    await rotate({ algorithm: 'Ed25519' });
    try {
      const edCheck = (status: number, body: ResponseBody) => status === 200 && String(body.signature).startsWith('Ed25519:');
      await paired(
        'reactivate-ed25519',
        'POST /api/v1/activate (re-activation, Ed25519 key)',
        { method: 'POST', path: '/api/v1/activate', bodies: activateBodies },
        'bare node:http + locked UPDATE + RSA sign',
        baselineActivate,
        edCheck,
      );
      await refreshSeats(pool);
      await paired(
        'validate-signed-ed25519',
        'POST /api/v1/validate with a nonce (signed answer, Ed25519 key)',
        { method: 'POST', path: '/api/v1/validate', bodies: signedValidateBodies },
        'bare node:http + pg SELECT + RSA sign',
        { method: 'POST', path: '/validate-signed', bodies: signedValidateBodies },
        (status, body) => validateCheck(status, body) && edCheck(status, body),
      );
    } finally {
      await rotate({ algorithm: 'RSA-SHA256' });
    }
  }

  // The same two rows with the server (and its baseline) running n node:cluster workers.
  for (const n of options.workers.filter((w) => w !== 1)) {
    if (!wanted('validate') && !wanted('reactivate') && !wanted('activate')) break;
    log(`  starting the server and its baseline with WEB_CONCURRENCY=${n}`);
    const more = await startWorkers(n);
    try {
      if (wanted('validate')) {
        await refreshSeats(pool);
        await validateRow(n, more);
      }
      if (wanted('reactivate')) await reactivateRow(n, more);
      if (wanted('activate')) await activateRow(n, more);
    } finally {
      await more.stop();
    }
  }
  return {
    result: {
      name,
      dataset,
      seedSeconds,
      idleStatementsPerSecond,
      scenarios,
      delivery,
      export: exportResult,
      notes: notes.length ? notes : undefined,
    },
    requests,
  };
}

interface Setup {
  workDir: string;
  signingKeyFile: string;
  apiKey: string;
  /** KEYRING_SECRET and SESSION_SECRET of every server: a scale's servers share its database and so its keyring. */
  secrets: { keyring: string; session: string };
  options: Options;
  cleanups: (() => Promise<unknown>)[];
}

interface ScaleServers {
  servers: Servers;
  pool: Pool;
  products: SeedProduct[];
  /** Another server and baseline on the same database, each running `workers` node:cluster workers. */
  startWorkers: (workers: number) => Promise<Servers & { stop: () => Promise<void> }>;
  /** Another single-worker server and baseline on the same database over loopback TCP (undefined: no socket to compare with). */
  startTcp?: () => Promise<Servers & { stop: () => Promise<void> }>;
}

/** The server under test and its baseline on database `dbName`, each with WEB_CONCURRENCY=`workers`. */
async function startServers(setup: Setup, name: string, dbUrl: string, dbName: string, workers: number, tag = ''): Promise<Servers> {
  const { options } = setup;
  const limits = Object.fromEntries(
    ['ACTIVATE', 'DEACTIVATE', 'VALIDATE', 'HEARTBEAT', 'ADMIN', 'LOGIN'].map((n) => [`RATE_LIMIT_${n}`, '1000000000']),
  );
  const label = `${workers === 1 ? name : `${name}-${workers}w`}${tag}`;
  const statementDir = join(setup.workDir, `statements-${label}`);
  mkdirSync(statementDir, { recursive: true });
  const app = await spawnNode({
    script: MAIN_SCRIPT,
    cwd: ROOT,
    readyPath: '/api/v1/health',
    nodeArgs: [
      '--require',
      join(__dirname, 'statement-counter.js'),
      ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, label)}`] : []),
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
    env: {
      DATABASE_URL: dbUrl,
      DATA_DIR: join(setup.workDir, `app-${label}`),
      SIGNING_KEY_FILE: setup.signingKeyFile,
      API_KEY: setup.apiKey,
      KEYRING_SECRET: setup.secrets.keyring,
      SESSION_SECRET: setup.secrets.session,
      ADMIN_PASSWORD: 'bench-password-1',
      LOG_LEVEL: 'warn',
      WEB_CONCURRENCY: String(workers),
      // The validate rows run for over a minute after their seats are refreshed: keep them fresh throughout.
      LAST_SEEN_INTERVAL: '3600',
      // The delivery-lag receiver listens on 127.0.0.1.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      BENCH_STATEMENT_DIR: statementDir,
      ...limits,
    },
  });
  const baseline = await spawnNode({
    script: join(__dirname, 'baseline-server.js'),
    cwd: ROOT,
    readyPath: '/health',
    env: { DATABASE_URL: dbUrl, SIGNING_KEY_FILE: setup.signingKeyFile, WEB_CONCURRENCY: String(workers) },
  }).catch(async (err: unknown) => {
    await app.stop();
    throw err;
  });
  // CPU of each process tree (the primary and its workers) and of every PostgreSQL backend of the database.
  const databaseCpu = postgresCpu(dbName);
  return {
    app: {
      url: app.url,
      process: app,
      cpu: { server: processTreeCpu(app.pid), database: databaseCpu, statements: statementMeter(statementDir) },
      loop: workers === 1 ? loopMeter(app.url, setup.apiKey) : undefined,
    },
    baseline: { url: baseline.url, process: baseline, cpu: { server: processTreeCpu(baseline.pid), database: databaseCpu } },
    apiKey: setup.apiKey,
  };
}

/** The scale's single-worker server and baseline, both on database `dbName`, and a pool for seeding it. */
async function startScale(setup: Setup, name: string, db: { url: string; tcpUrl?: string; name: string }): Promise<ScaleServers> {
  const { cleanups } = setup;
  const servers = await startServers(setup, name, db.url, db.name, 1);
  cleanups.push(servers.app.process.stop, servers.baseline.process.stop);
  const pool = new Pool({ connectionString: db.url, max: 2 });
  cleanups.push(() => pool.end());
  const startMore = async (url: string, workers: number, tag = '') => {
    const more = await startServers(setup, name, url, db.name, workers, tag);
    const stop = () => Promise.all([more.app.process.stop(), more.baseline.process.stop()]).then(() => undefined);
    cleanups.push(stop);
    return { ...more, stop };
  };
  const { tcpUrl } = db;
  return {
    servers,
    pool,
    products: await loadProducts(pool),
    startWorkers: (workers: number) => startMore(db.url, workers),
    startTcp: tcpUrl ? () => startMore(tcpUrl, 1, '-tcp') : undefined,
  };
}

/** The endpoints whose large/small latency is measured again with the two scales in turn (those present at both). */
const COMPARED = ['stats', 'licenses', 'audit', 'licenses-deep', 'audit-deep', 'validate', 'reactivate'];

/** The smoke's large scale: the compared rows and the export, within --only when it is given. */
function smokeLargeRows(only: Set<string> | undefined): Set<string> {
  return new Set([...COMPARED, 'export'].filter((key) => only?.has(key) ?? true));
}

/**
 * Each endpoint once more at both scales, run by run in turn (large, small, large, ...), so a machine whose
 * speed drifts during the long seeding between the two scales cannot make the large scale look faster or slower.
 */
async function compareScales(
  small: ScaleServers & MeasuredScale,
  large: ScaleServers & MeasuredScale,
  options: Options,
): Promise<NonNullable<BenchReport['scaleCheck']>> {
  log('\n== both scales in turn');
  const out: NonNullable<BenchReport['scaleCheck']> = {};
  for (const key of COMPARED.filter((k) => small.requests[k] && large.requests[k])) {
    if (key === 'validate') await Promise.all([refreshSeats(small.pool), refreshSeats(large.pool)]);
    const label = small.result.scenarios[key].label;
    log(`  ${label}`);
    const m = await measurePair(
      { url: large.servers.app.url, scenario: large.requests[key], meters: large.servers.app.cpu },
      { url: small.servers.app.url, scenario: small.requests[key], meters: small.servers.app.cpu },
      options,
      (who, i, r) =>
        log(
          `  ${label} ${who === 'baseline' ? 'small' : 'large'} run ${i + 1}: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms` +
            (r.failures ? `, ${r.failures} FAILED` : ''),
        ),
    );
    const smallRuns = m.baseline as NonNullable<typeof m.baseline>;
    const failed = [...m.target.runs, ...smallRuns.runs].reduce((sum, r) => sum + r.failures, 0);
    out[key] = {
      label,
      small: smallRuns,
      large: m.target,
      p50Ratio: Math.round((m.target.median.p50 / smallRuns.median.p50) * 100) / 100,
      warning: failed ? `${failed} requests failed` : undefined,
    };
  }
  return out;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!existsSync(MAIN_SCRIPT)) throw new Error(`${MAIN_SCRIPT} is missing: run npm run build first (npm run bench does)`);
  const loadBefore = loadavg();
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  // The code measured is the build made now: a source edit during a long run must not mark the results.
  const commit = gitCommit();
  const workDir = mkdtempSync(join(tmpdir(), 'licence-bench-'));
  // Traversable (not readable) by others: as root, the embedded PostgreSQL runs as the postgres OS user.
  chmodSync(workDir, 0o711);
  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    while (cleanups.length) await (cleanups.pop() as () => Promise<unknown>)().catch((err) => log(`cleanup: ${(err as Error).message}`));
    rmSync(workDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  try {
    // Start-up on its own, before anything else runs: a fresh DATA_DIR means initdb, migrations and key generation.
    log(
      `load generator: ${options.generatorVersion}, ${options.connections} connections, keep-alive; workers ${options.workers.join(',')}`,
    );
    log('start-up: server with the embedded PostgreSQL and a fresh DATA_DIR');
    const cold = await spawnNode({
      script: MAIN_SCRIPT,
      cwd: ROOT,
      readyPath: '/api/v1/health',
      env: { DATA_DIR: join(workDir, 'startup'), LOG_LEVEL: 'warn', ADMIN_PASSWORD: 'bench-password-1' },
    });
    await cold.stop();
    log(`  first 200 after ${Math.round(cold.readyMs)} ms`);

    const db = await freshDatabase(workDir);
    cleanups.push(db.close);
    const signingKeyFile = join(workDir, 'signing-key.pem');
    loadOrCreateSigningKey(signingKeyFile);
    const apiKey = randomBytes(24).toString('hex');
    const secrets = { keyring: randomBytes(32).toString('hex'), session: randomBytes(32).toString('hex') };
    const setup = { workDir, signingKeyFile, apiKey, secrets, options, cleanups };
    const small = await startScale(setup, 'small', db);
    const sharedBuffers = (await small.pool.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0].shared_buffers;
    const smallMeasured = await measureScale(0, 'small', { licenses: options.smallLicenses, audit: options.smallAudit }, small, options);
    const scales: ScaleResult[] = [smallMeasured.result];
    let scaleCheck: BenchReport['scaleCheck'];
    if (options.largeLicenses !== undefined || options.largeAudit !== undefined) {
      // Its own database and servers, so both scales stay available and can be measured in turn at the end.
      const largeDb = await db.sibling('large');
      const large = await startScale(setup, 'large', largeDb);
      const target = { licenses: options.largeLicenses ?? options.smallLicenses, audit: options.largeAudit ?? options.smallAudit };
      // The smoke proves the path at the second scale with the rows the scales are compared on (and the export); every
      // other row already ran at the first scale, and measuring it again at 400 licences proves nothing new.
      const largeOptions = options.smoke ? { ...options, only: smokeLargeRows(options.only) } : options;
      const largeMeasured = await measureScale(1, 'large', target, large, largeOptions);
      scales.push(largeMeasured.result);
      scaleCheck = await compareScales({ ...small, ...smallMeasured }, { ...large, ...largeMeasured }, options);
    }
    await cleanup();

    const cpu = cpus();
    const report: BenchReport = {
      date,
      commit,
      mode: options.smoke ? 'smoke' : 'full',
      machine: {
        cpus: cpu.length,
        cpuModel: cpu[0]?.model.trim() ?? 'unknown',
        memoryGiB: Math.round(totalmem() / 2 ** 30),
        os: `${type()} ${release()}`,
        node: process.version,
        loadBefore,
        loadAfter: loadavg(),
      },
      database: `${db.kind === 'embedded' ? 'embedded PostgreSQL (fresh cluster, as npm start runs it)' : 'BENCH_DATABASE_URL (dedicated database)'}, shared_buffers ${sharedBuffers}`,
      options: {
        connections: options.connections,
        warmupSeconds: options.warmupSeconds,
        durationSeconds: options.durationSeconds,
        runs: options.runs,
        generator: options.generator,
        generatorVersion: options.generatorVersion,
        workers: options.workers,
      },
      startup: { firstHealthyMs: Math.round(cold.readyMs) },
      scales,
      scaleCheck,
    };
    const out =
      options.out ??
      (options.smoke
        ? join(tmpdir(), `licence-bench-smoke-${process.pid}.json`)
        : join(ROOT, 'bench', 'results', `${date.replace(/:/g, '-')}.json`));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`\n${renderText(report)}\n\nresults: ${out}\n`);
  } catch (err) {
    await cleanup();
    throw err;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
