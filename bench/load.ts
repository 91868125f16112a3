import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { CpuMeters, CpuPerRequest, startCpu, statFields, TICK_US } from './cpu';
import { LoopMeter, LoopReading } from './loop';
import { toError } from '../src/common/errors/to-error';

/** One kind of request to measure. */
export interface Scenario {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** Request bodies, one picked at random for every request (random seats of a sample). */
  bodies?: readonly string[];
  /**
   * Bodies that must not repeat (a licence never activated before, per request): called once per body. wrk is
   * handed uniqueBodiesFor(seconds, uniquePerSecond) of them up front; autocannon and the paced runner call it per request.
   */
  nextBody?: () => string;
  /** The fastest nextBody's scenario can go, in requests per second (sizes what wrk is handed). */
  uniquePerSecond?: number;
  /** Requests per second, evenly spaced over at most `connections` sockets (runPaced); unset: as fast as the server answers. */
  rate?: number;
}

/** A body per request, as autocannon, the paced runner and the preflight send them. */
export function bodyOf(scenario: Scenario): (() => string) | undefined {
  const { bodies, nextBody } = scenario;
  if (bodies) return () => bodies[Math.floor(Math.random() * bodies.length)];
  return nextBody;
}

/** How many unique bodies a wrk run of `seconds` gets: half again what the scenario's fastest rate could use. */
export function uniqueBodiesFor(seconds: number, perSecond: number): number {
  return Math.ceil(wrkSeconds(seconds) * perSecond * 1.5) + 500;
}

/** wrk takes whole seconds. */
const wrkSeconds = (seconds: number) => Math.max(1, Math.round(seconds));

export type Generator = 'wrk' | 'autocannon';

export interface RunResult {
  /** What produced the load: wrk, autocannon (both closed-loop, `connections` at a time) or the open-loop paced runner. */
  generator: Generator | 'paced';
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** Responses other than 2xx and socket errors: a correct run has none. */
  failures: number;
  statuses: Record<string, number>;
  /** CPU time per successful request: server process tree, its PostgreSQL backends, the load generator (and its share of the machine). */
  cpu: CpuPerRequest;
  /** wrk only: requests that had to reuse a unique body (nextBody) because the run outran what it was handed. */
  repeatedBodies?: number;
  /** The server's event loop over the run, when the target was given a LoopMeter (bench/loop.ts). */
  loop?: LoopReading;
}

export interface Measurement {
  runs: RunResult[];
  median: {
    rps: number;
    p50: number;
    p99: number;
    serverUs?: number;
    databaseUs?: number;
    loadGeneratorUs?: number;
    loadGeneratorShare?: number;
    /** PostgreSQL statements the server sent per request (absent for baselines and older runs). */
    statements?: number;
  };
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  runs: number;
  /** The closed-loop load generator (the fixed-rate rows always use the paced runner). */
  generator: Generator;
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A run's result from the latencies of its successful requests (one each) and its wall-clock seconds. */
function runResult(
  generator: RunResult['generator'],
  latencies: number[],
  elapsed: number,
  failures: number,
  statuses: Record<string, number>,
  cpu: CpuPerRequest,
): RunResult {
  const sorted = Float64Array.from(latencies).sort();
  return {
    generator,
    rps: round(latencies.length / elapsed, 0),
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    requests: latencies.length,
    failures,
    statuses,
    cpu,
  };
}

/** The wrk on PATH, or undefined. */
function findWrk(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, 'wrk'), constants.X_OK);
      return join(dir, 'wrk');
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The generator asked for, or wrk when it is installed and autocannon otherwise; with its version for the report. */
export function chooseGenerator(requested: string | undefined): { generator: Generator; version: string } {
  if (requested !== undefined && requested !== 'wrk' && requested !== 'autocannon')
    throw new Error('--generator must be wrk or autocannon');
  const wrk = findWrk();
  if (requested === 'wrk' && !wrk) throw new Error('--generator wrk: wrk is not installed (apt-get install wrk)');
  if (requested === 'autocannon' || !wrk) {
    const { version } = JSON.parse(readFileSync(require.resolve('autocannon/package.json'), 'utf8')) as { version: string };
    return { generator: 'autocannon', version: `autocannon ${version} (in the bench process)` };
  }
  // `wrk -v` prints its version line and exits 1.
  const banner = spawnSync(wrk, ['-v'], { encoding: 'utf8' });
  return { generator: 'wrk', version: `${(banner.stdout || banner.stderr).split('\n')[0].replace(/ Copyright.*$/, '')}, 1 thread` };
}

let scratch: string | undefined;
/** A temporary directory for wrk's scripts and bodies, removed when the bench exits. */
function scratchDir(): string {
  if (!scratch) {
    const dir = mkdtempSync(join(tmpdir(), 'licence-bench-wrk-'));
    scratch = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return scratch;
}

let files = 0;
/** The bodies of a scenario, one a line (JSON has no raw newlines), written once per array. */
const bodyFiles = new WeakMap<readonly string[], string>();
function writeBodies(bodies: readonly string[], cache: boolean): string {
  const cached = bodyFiles.get(bodies);
  if (cached) return cached;
  if (bodies.some((b) => b.includes('\n'))) throw new Error('wrk: a request body contains a newline');
  const file = join(scratchDir(), `bodies-${++files}.txt`);
  writeFileSync(file, `${bodies.join('\n')}\n`);
  if (cache) bodyFiles.set(bodies, file);
  return file;
}

/** A Lua string literal: only printable ASCII is expected here (paths, header names, hex keys). */
function lua(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`wrk: unexpected characters in ${JSON.stringify(text)}`);
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The wrk script of a scenario. Every request is formatted once in init(); request() then picks one at random
 * (`random`) or takes the next (`sequence`, counting reuses once the list runs out). response() tallies the
 * statuses, and done() writes one line `BENCH_WRK {json}` with the counts, the latency percentiles and wrk's
 * own /proc/self/stat (its CPU time, all threads) twice: when init() is done and just before wrk exits, so the
 * generator's CPU is that of the load, not of loading the bodies.
 */
function wrkScript(scenario: Scenario, bodiesFile: string | undefined, mode: 'random' | 'sequence'): string {
  const headers = { 'content-type': 'application/json', ...scenario.headers };
  const headerTable = Object.entries(headers)
    .map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
    .join(', ');
  const next =
    mode === 'sequence'
      ? `  i = i + 1
  if i > n then i = 1; repeated = repeated + 1 elseif repeated > 0 then repeated = repeated + 1 end
  return reqs[i]`
      : '  return reqs[math.random(n)]';
  const requestSetup = bodiesFile
    ? `local reqs, n, i = {}, 0, 0
function init(args)
  for line in io.lines(${lua(bodiesFile)}) do
    n = n + 1
    reqs[n] = wrk.format(${lua(scenario.method)}, ${lua(scenario.path)}, { ${headerTable} }, line)
  end
  started_stat = proc_stat()
end
function request()
${next}
end`
    : `wrk.method = ${lua(scenario.method)}
${Object.entries(headers)
  .map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`)
  .join('\n')}
function init(args) started_stat = proc_stat() end`;
  return String.raw`-- Generated by bench/load.ts for ${scenario.method} ${scenario.path}
statuses, repeated = {}, 0
local threads = {}
function proc_stat()
  local f = io.open("/proc/self/stat")
  local stat = f:read("*a"):gsub('[\n"\\]', "")
  f:close()
  return stat
end
function setup(thread) threads[#threads + 1] = thread end
${requestSetup}
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
  local counts, reused = {}, 0
  for _, t in ipairs(threads) do
    for status, count in pairs(t:get("statuses")) do counts[status] = (counts[status] or 0) + count end
    reused = reused + t:get("repeated")
  end
  local parts = {}
  for status, count in pairs(counts) do parts[#parts + 1] = string.format('"%d":%d', status, count) end
  local e = summary.errors
  io.write(string.format('\nBENCH_WRK {"durationUs":%d,"errors":%d,"p50Us":%.1f,"p99Us":%.1f,"statuses":{%s},"repeated":%d,"startedStat":"%s","stat":"%s"}\n',
    summary.duration, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99),
    table.concat(parts, ","), reused, threads[1]:get("started_stat"), proc_stat()))
end
`;
}

interface WrkOutput {
  durationUs: number;
  errors: number;
  p50Us: number;
  p99Us: number;
  statuses: Record<string, number>;
  repeated: number;
  startedStat: string;
  stat: string;
}

/**
 * One closed-loop run with wrk (one thread, `connections` keep-alive connections, whole seconds). Latency
 * percentiles are wrk's, over every response (a correct run has only 2xx); req/s counts the 2xx.
 */
export async function runWrk(
  baseUrl: string,
  scenario: Scenario,
  connections: number,
  seconds: number,
  meters?: CpuMeters,
): Promise<RunResult> {
  const duration = wrkSeconds(seconds);
  let bodiesFile: string | undefined;
  let mode: 'random' | 'sequence' = 'random';
  if (scenario.bodies) bodiesFile = writeBodies(scenario.bodies, true);
  else if (scenario.nextBody) {
    const next = scenario.nextBody;
    const count = uniqueBodiesFor(duration, scenario.uniquePerSecond ?? 10_000);
    bodiesFile = writeBodies(
      Array.from({ length: count }, () => next()),
      false,
    );
    mode = 'sequence';
  }
  const script = join(scratchDir(), `script-${++files}.lua`);
  writeFileSync(script, wrkScript(scenario, bodiesFile, mode));
  const cpu = startCpu(meters);
  const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${duration}s`, '--timeout', '60s', '-s', script, baseUrl + scenario.path], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const line = /^BENCH_WRK (.*)$/m.exec(stdout);
  if (code !== 0 || !line) throw new Error(`wrk exited with ${code}:\n${stdout}\n${stderr}`);
  const out = JSON.parse(line[1]) as WrkOutput;
  const ticks = (stat: string) => {
    const fields = statFields(stat);
    return Number(fields[11]) + Number(fields[12]);
  };
  const generatorUs = (ticks(out.stat) - ticks(out.startedStat)) * TICK_US;
  let ok = 0;
  let failures = out.errors;
  for (const [status, count] of Object.entries(out.statuses)) {
    if (Number(status) >= 200 && Number(status) < 300) ok += count;
    else failures += count;
  }
  const elapsed = out.durationUs / 1e6;
  if (out.errors) out.statuses['socket errors'] = out.errors;
  return {
    generator: 'wrk',
    rps: round(ok / elapsed, 0),
    p50: round(out.p50Us / 1000),
    p99: round(out.p99Us / 1000),
    requests: ok,
    failures,
    statuses: out.statuses,
    cpu: cpu(ok, elapsed, { us: generatorUs }),
    repeatedBodies: mode === 'sequence' ? out.repeated : undefined,
  };
}

/**
 * One load run with autocannon at `connections` for `seconds`. Latencies are collected from every
 * 2xx response at sub-millisecond resolution (autocannon's own histogram rounds to whole ms).
 */
export async function runAutocannon(
  baseUrl: string,
  scenario: Scenario,
  connections: number,
  seconds: number,
  meters?: CpuMeters,
): Promise<RunResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let ok = 0;
  let failures = 0;
  const headers = { 'content-type': 'application/json', ...scenario.headers };
  const body = bodyOf(scenario);
  let finished!: Promise<void>;
  const cpu = startCpu(meters);
  const started = process.hrtime.bigint();
  const instance = (() => {
    let done!: (err: unknown) => void;
    finished = new Promise<void>((resolve, reject) => (done = (err) => (err ? reject(toError(err)) : resolve())));
    return autocannon(
      {
        url: baseUrl + scenario.path,
        method: scenario.method,
        connections,
        duration: seconds,
        headers,
        requests: body
          ? [
              {
                method: scenario.method,
                path: scenario.path,
                headers,
                setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }),
              },
            ]
          : undefined,
      },
      (err) => done(err),
    );
  })();
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status >= 200 && status < 300) {
      ok++;
      latencies.push(ms);
    } else {
      failures++;
    }
  });
  instance.on('reqError', () => failures++);
  await finished;
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return runResult('autocannon', latencies, elapsed, failures, statuses, cpu(ok, elapsed));
}

/**
 * An open-loop run at `scenario.rate` requests per second, evenly spaced (autocannon's rate option sends each
 * connection's whole second of requests in one burst, which measures its own queue; wrk has no rate, and Debian
 * ships no wrk2). Latency is counted from the moment a request was due, not sent, so a server that falls behind
 * is not flattered (coordinated omission). It runs in the bench process: its CPU is reported like wrk's.
 */
export async function runPaced(
  baseUrl: string,
  scenario: Scenario,
  connections: number,
  seconds: number,
  meters?: CpuMeters,
): Promise<RunResult> {
  const rate = scenario.rate as number;
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let ok = 0;
  let failures = 0;
  let inFlight = 0;
  const url = new URL(baseUrl + scenario.path);
  const bodyFor = bodyOf(scenario);
  const cpu = startCpu(meters);
  const started = performance.now();
  const send = (due: number) => {
    inFlight++;
    const body = bodyFor?.();
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: scenario.method,
        headers: { 'content-type': 'application/json', ...scenario.headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          inFlight--;
          const status = res.statusCode ?? 0;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status >= 200 && status < 300) {
            ok++;
            latencies.push(performance.now() - due);
          } else failures++;
        });
      },
    );
    req.on('error', () => (inFlight--, failures++));
    req.end(body);
  };
  let sent = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      const due = Math.min(Math.floor(elapsed * rate), Math.floor(seconds * rate));
      for (; sent < due; sent++) send(started + (sent / rate) * 1000);
      if (elapsed >= seconds) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
  agent.destroy();
  const elapsed = (performance.now() - started) / 1000;
  return runResult('paced', latencies, elapsed, failures, statuses, cpu(ok, elapsed));
}

export function summarize(runs: RunResult[]): Measurement {
  const cpu = (key: keyof CpuPerRequest) => {
    const values = runs.map((r) => r.cpu[key]).filter((v): v is number => v !== undefined);
    return values.length ? median(values) : undefined;
  };
  return {
    runs,
    median: {
      rps: median(runs.map((r) => r.rps)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      serverUs: cpu('serverUs'),
      databaseUs: cpu('databaseUs'),
      loadGeneratorUs: cpu('loadGeneratorUs'),
      loadGeneratorShare: cpu('loadGeneratorShare'),
      statements: cpu('statements'),
    },
  };
}

/**
 * Warm-up, then `runs` measured runs. With a baseline, the two alternate run by run (warm-up of
 * both first), so drift on a noisy machine hits both the same way.
 */
export async function measurePair(
  target: { url: string; scenario: Scenario; meters?: CpuMeters; loop?: LoopMeter },
  baseline: { url: string; scenario: Scenario; meters?: CpuMeters } | undefined,
  options: LoadOptions,
  onRun?: (who: 'target' | 'baseline', index: number, run: RunResult) => void,
): Promise<{ target: Measurement; baseline?: Measurement }> {
  const closedLoop = options.generator === 'wrk' ? runWrk : runAutocannon;
  const runLoad = (url: string, scenario: Scenario, connections: number, seconds: number, meters?: CpuMeters) =>
    (scenario.rate ? runPaced : closedLoop)(url, scenario, connections, seconds, meters);
  if (options.warmupSeconds > 0) {
    if (baseline) await runLoad(baseline.url, baseline.scenario, options.connections, options.warmupSeconds);
    await runLoad(target.url, target.scenario, options.connections, options.warmupSeconds);
  }
  const targetRuns: RunResult[] = [];
  const baselineRuns: RunResult[] = [];
  for (let i = 0; i < options.runs; i++) {
    if (baseline) {
      const run = await runLoad(baseline.url, baseline.scenario, options.connections, options.durationSeconds, baseline.meters);
      baselineRuns.push(run);
      onRun?.('baseline', i, run);
    }
    await target.loop?.start();
    const run = await runLoad(target.url, target.scenario, options.connections, options.durationSeconds, target.meters);
    const loop = await target.loop?.read();
    if (loop) run.loop = loop;
    targetRuns.push(run);
    onRun?.('target', i, run);
  }
  return { target: summarize(targetRuns), baseline: baseline ? summarize(baselineRuns) : undefined };
}
