import autocannon from 'autocannon';
import { Agent, request } from 'node:http';
import { CpuMeters, CpuPerRequest, startCpu } from './cpu';
import { toError } from '../src/common/errors/to-error';

/** One kind of request to measure; `body` is called for every request (fresh keys, random seats). */
export interface Scenario {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: () => string;
  /** Requests per second, evenly spaced over at most `connections` sockets (runPaced); unset: as fast as the server answers. */
  rate?: number;
}

export interface RunResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** Responses other than 2xx and socket errors: a correct run has none. */
  failures: number;
  statuses: Record<string, number>;
  /** CPU time per successful request: server process, its PostgreSQL backends, the load generator. */
  cpu: CpuPerRequest;
}

export interface Measurement {
  runs: RunResult[];
  median: { rps: number; p50: number; p99: number; serverUs?: number; databaseUs?: number };
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  runs: number;
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
  latencies: number[],
  elapsed: number,
  failures: number,
  statuses: Record<string, number>,
  cpu: CpuPerRequest,
): RunResult {
  const sorted = Float64Array.from(latencies).sort();
  return {
    rps: round(latencies.length / elapsed, 0),
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    requests: latencies.length,
    failures,
    statuses,
    cpu,
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
        requests: scenario.body
          ? [
              {
                method: scenario.method,
                path: scenario.path,
                headers,
                setupRequest: (req: autocannon.Request) => ({ ...req, body: (scenario.body as () => string)() }),
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
  return runResult(latencies, elapsed, failures, statuses, cpu(ok));
}

/**
 * An open-loop run at `scenario.rate` requests per second, evenly spaced (autocannon's rate option sends each
 * connection's whole second of requests in one burst, which measures its own queue). Latency is counted from
 * the moment a request was due, not sent, so a server that falls behind is not flattered (coordinated omission).
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
  const cpu = startCpu(meters);
  const started = performance.now();
  const send = (due: number) => {
    inFlight++;
    const body = scenario.body?.();
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
  return runResult(latencies, elapsed, failures, statuses, cpu(ok));
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
    },
  };
}

/**
 * Warm-up, then `runs` measured runs. With a baseline, the two alternate run by run (warm-up of
 * both first), so drift on a noisy machine hits both the same way.
 */
export async function measurePair(
  target: { url: string; scenario: Scenario; meters?: CpuMeters },
  baseline: { url: string; scenario: Scenario; meters?: CpuMeters } | undefined,
  options: LoadOptions,
  onRun?: (who: 'target' | 'baseline', index: number, run: RunResult) => void,
): Promise<{ target: Measurement; baseline?: Measurement }> {
  const runLoad = (url: string, scenario: Scenario, connections: number, seconds: number, meters?: CpuMeters) =>
    (scenario.rate ? runPaced : runAutocannon)(url, scenario, connections, seconds, meters);
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
    const run = await runLoad(target.url, target.scenario, options.connections, options.durationSeconds, target.meters);
    targetRuns.push(run);
    onRun?.('target', i, run);
  }
  return { target: summarize(targetRuns), baseline: baseline ? summarize(baselineRuns) : undefined };
}
