import autocannon from 'autocannon';
import { CpuMeters, CpuPerRequest, startCpu } from './cpu';

/** One kind of request to measure; `body` is called for every request (fresh keys, random seats). */
export interface Scenario {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: () => string;
  /** Requests per second over all connections (autocannon overallRate); unset: as fast as the server answers. */
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

/**
 * One load run with autocannon at `connections` for `seconds`. Latencies are collected from every
 * 2xx response at sub-millisecond resolution (autocannon's own histogram rounds to whole ms).
 */
export async function runLoad(baseUrl: string, scenario: Scenario, connections: number, seconds: number, meters?: CpuMeters): Promise<RunResult> {
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
    finished = new Promise<void>((resolve, reject) => (done = (err) => (err ? reject(err) : resolve())));
    return autocannon(
      {
        url: baseUrl + scenario.path,
        method: scenario.method,
        connections,
        duration: seconds,
        headers,
        ...(scenario.rate ? { overallRate: scenario.rate } : {}),
        requests: scenario.body
          ? [{ method: scenario.method, path: scenario.path, headers, setupRequest: (req: any) => ({ ...req, body: (scenario.body as () => string)() }) }]
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
  const sorted = Float64Array.from(latencies).sort();
  return { rps: round(ok / elapsed, 0), p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), requests: ok, failures, statuses, cpu: cpu(ok) };
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
