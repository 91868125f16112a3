import { readFileSync } from 'node:fs';
import type { ExportBenchResult } from './export';
import type { Measurement } from './load';
import type { DatasetSize } from './seed';
import type { DeliveryCapacity, WebhookDeliveries, WebhookLag } from './webhook-receiver';

export interface ScenarioResult {
  label: string;
  target: Measurement;
  baseline?: Measurement & { label: string };
  /** target req/s ÷ baseline req/s (medians). */
  ratio?: number;
  warning?: string;
  /** activate: delivery lag of the license.activated webhooks the load caused (event timestamp to receipt). */
  webhookLag?: WebhookLag;
  /** The rows run with an endpoint subscribed to `*` (reactivate-hook, validate-hook): deliveries created for it (expected 0). */
  webhookDeliveries?: WebhookDeliveries;
}

export interface ScaleResult {
  name: string;
  dataset: DatasetSize;
  seedSeconds: number;
  scenarios: Record<string, ScenarioResult>;
  /** The `deliver` row: deliveries per second of the pipeline against the fresh activations per second at saturation. */
  delivery?: DeliveryCapacity;
  /** The streaming licence export: rows per second and the server's RSS growth (docs/admin-api.md, Exports). */
  export?: ExportBenchResult;
  /** Rows left out, and why (e.g. the deep-page rows on a build without keyset pagination). */
  notes?: string[];
  /** PostgreSQL statements per second of the idle server (background work, part of every row's PG stmts/req). */
  idleStatementsPerSecond?: number;
}

export interface BenchReport {
  date: string;
  commit: string;
  mode: 'full' | 'smoke';
  machine: { cpus: number; cpuModel: string; memoryGiB: number; os: string; node: string; loadBefore: number[]; loadAfter: number[] };
  database: string;
  options: {
    connections: number;
    warmupSeconds: number;
    durationSeconds: number;
    runs: number;
    /** The closed-loop load generator (absent in runs before wrk: autocannon). */
    generator?: 'wrk' | 'autocannon';
    generatorVersion?: string;
    /** WEB_CONCURRENCY values at which validate and fresh activation were measured. */
    workers?: number[];
  };
  startup: { firstHealthyMs: number };
  scales: ScaleResult[];
  /** With a large scale: endpoints measured again at both scales run by run in turn; p50Ratio = large ÷ small p50 (medians). */
  scaleCheck?: Record<string, { label: string; small: Measurement; large: Measurement; p50Ratio: number; warning?: string }>;
}

const num = (x: number | undefined, digits = 0) =>
  x === undefined || Number.isNaN(x) ? '-' : x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** "server+database" CPU µs per request, e.g. `812+134`. */
const cpuCell = (m?: Measurement) =>
  m?.median.serverUs === undefined
    ? '-'
    : `${num(m.median.serverUs)}+${m.median.databaseUs === undefined ? '?' : num(m.median.databaseUs)}`;

/** The load generator's µs per request, `target / baseline`. */
const generatorUsCell = (r?: ScenarioResult) =>
  r?.target.median.loadGeneratorUs === undefined
    ? '-'
    : [r.target, r.baseline]
        .filter((m) => m !== undefined)
        .map((m) => num(m.median.loadGeneratorUs))
        .join(' / ');

/** The load generator's share of the machine's CPU over the runs, `target / baseline`. */
const generatorShareCell = (r?: ScenarioResult) =>
  r?.target.median.loadGeneratorShare === undefined
    ? '-'
    : [r.target, r.baseline]
        .filter((m) => m !== undefined)
        .map((m) => `${num(m.median.loadGeneratorShare, 1)} %`)
        .join(' / ');

const scaleTitle = (s: ScaleResult) => `${s.name}: ${num(s.dataset.licenses)} licences, ${num(s.dataset.audit)} audit entries`;

/** Rows of the side-by-side table: one per scenario, the scales as column groups. */
function rows(report: BenchReport): { header: string[]; body: string[][] } {
  const header = ['endpoint'];
  for (const s of report.scales)
    header.push(
      `${s.name} req/s`,
      'p50 ms',
      'p99 ms',
      'CPU µs/req',
      'PG stmts/req',
      'baseline req/s',
      'baseline p99',
      'ratio',
      'gen. µs/req',
      'gen. CPU share',
    );
  if (report.scales.length > 1) header.push('large/small p50, halves', 'large/small p50, in turn');
  const names = [...new Set(report.scales.flatMap((s) => Object.keys(s.scenarios)))];
  const body = names.map((name) => {
    const first = report.scales.find((s) => s.scenarios[name])?.scenarios[name] as ScenarioResult;
    const row = [first.label];
    for (const s of report.scales) {
      const r = s.scenarios[name];
      row.push(
        num(r?.target.median.rps),
        num(r?.target.median.p50, 2),
        num(r?.target.median.p99, 2),
        cpuCell(r?.target),
        num(r?.target.median.statements, 2),
        num(r?.baseline?.median.rps),
        num(r?.baseline?.median.p99, 2),
        r?.ratio === undefined ? '-' : num(r.ratio, 2),
        generatorUsCell(r),
        generatorShareCell(r),
      );
    }
    if (report.scales.length > 1) {
      const [small, large] = [report.scales[0].scenarios[name], report.scales[report.scales.length - 1].scenarios[name]];
      row.push(small && large ? `${num(large.target.median.p50 / small.target.median.p50, 2)}x` : '-');
      const inTurn = report.scaleCheck?.[name];
      row.push(inTurn ? `${num(inTurn.p50Ratio, 2)}x` : '-');
    }
    return row;
  });
  return { header, body };
}

function preamble(report: BenchReport): string[] {
  const m = report.machine;
  return [
    `${report.date}, commit ${report.commit}, ${report.mode} mode`,
    `machine: ${m.cpus} x ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}; load average ${m.loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${m.loadAfter.map((l) => l.toFixed(2)).join(' ')} after`,
    `database: ${report.database}; CPU µs/req = server process tree (primary and workers) + its PostgreSQL backends; PG stmts/req = statements (round trips) the server's pg clients sent per request, background work included; ${report.options.connections} connections, ${report.options.warmupSeconds} s warm-up, median of ${report.options.runs} x ${report.options.durationSeconds} s`,
    `load generator: ${report.options.generatorVersion ?? 'autocannon (in the bench process)'}, keep-alive; the fixed-rate row: the bench's open-loop paced runner (Debian has no wrk2), latency from when each request was due; gen. µs/req and gen. CPU share (of all ${m.cpus} cores over the run) are the generator's own, target / baseline`,
    `start-up to first 200 of GET /api/v1/health (embedded PostgreSQL, fresh DATA_DIR): ${num(report.startup.firstHealthyMs)} ms`,
    ...report.scales.map(
      (s) =>
        `${scaleTitle(s)}, ${num(s.dataset.seats)} bound seats (seeded in ${num(s.seedSeconds, 1)} s)` +
        (s.idleStatementsPerSecond === undefined
          ? ''
          : `; the idle server sends ${num(s.idleStatementsPerSecond, 1)} PostgreSQL statements/s (background work, in every PG stmts/req)`),
    ),
    'validate: random seats of a 50,000-seat sample, refreshed just before (the read path; the last_seen_at write is part of activate)',
    ...(report.scaleCheck
      ? [
          'large/small p50: "halves" compares the two halves of the run above; "in turn" measures both scales again at the end, alternating run by run on their own databases, so drift of the machine between the halves cancels out',
        ]
      : []),
  ];
}

/** One line per scale with an export measurement. */
const exportLines = (report: BenchReport) =>
  report.scales
    .filter((s) => s.export)
    .map((s) => {
      const e = s.export as ExportBenchResult;
      return `${s.name} ${e.label}: ${num(e.rows)} rows in ${num(e.seconds, 2)} s = ${num(e.rowsPerSecond)} rows/s, ${num(e.bytes / 1048576, 1)} MiB; server RSS ${num(e.rssBeforeMiB, 1)} MiB before, peak ${num(e.rssPeakMiB, 1)} MiB, growth ${num(e.rssGrowthMiB, 1)} MiB (limit 100); RSS after each tenth: ${(e.rssByTenthMiB ?? []).map((m) => num(m, 0)).join(' ')}`;
    });
const lagLines = (report: BenchReport) =>
  report.scales.flatMap((s) =>
    Object.values(s.scenarios)
      .filter((r) => r.webhookLag)
      .map((r) => {
        const l = r.webhookLag as WebhookLag;
        return `${s.name} webhook delivery lag under "${r.label}" (the body's event timestamp to receipt, local receiver answering 204): ${num(l.delivered)} delivered, p50 ${num(l.p50Ms)} ms, p99 ${num(l.p99Ms)} ms, max ${num(l.maxMs)} ms; backlog drained ${num(l.drainSeconds, 1)} s after the load`;
      }),
  );

const capacityLines = (report: BenchReport) =>
  report.scales
    .filter((s) => s.delivery)
    .map((s) => {
      const d = s.delivery as DeliveryCapacity;
      const produced =
        d.producedPerSecond === undefined
          ? ''
          : `; fresh activations at saturation ${num(d.producedPerSecond)}/s, ratio ${num(d.ratio, 2)}`;
      return `${s.name} webhook delivery capacity (${num(d.events)} events to one endpoint at once, receiver answering 204): ${num(d.perSecond)} deliveries/s, ${num(d.seconds, 2)} s (all recorded at ${num(d.recordedSeconds, 2)} s), CPU per delivery ${num(d.serverUs)}+${num(d.databaseUs)} µs${produced}`;
    });

const deliveryLines = (report: BenchReport) =>
  report.scales.flatMap((s) =>
    Object.values(s.scenarios)
      .filter((r) => r.webhookDeliveries)
      .map((r) => {
        const d = r.webhookDeliveries as WebhookDeliveries;
        const types = Object.entries(d.byType).map(([type, n]) => `${type} ${num(n)}`);
        return `${s.name} webhook deliveries created during "${r.label}": ${num(d.created)}${types.length ? ` (${types.join(', ')})` : ''}, expected 0`;
      }),
  );

const noteLines = (report: BenchReport) => report.scales.flatMap((s) => (s.notes ?? []).map((n) => `NOTE ${s.name}: ${n}`));

const warnings = (report: BenchReport) => [
  ...report.scales.filter((s) => s.export?.warning).map((s) => `WARNING ${s.name} ${s.export?.label}: ${s.export?.warning}`),
  ...report.scales.flatMap((s) =>
    Object.values(s.scenarios)
      .filter((r) => r.warning)
      .map((r) => `WARNING ${s.name} ${r.label}: ${r.warning}`),
  ),
  ...Object.values(report.scaleCheck ?? {})
    .filter((r) => r.warning)
    .map((r) => `WARNING both scales in turn, ${r.label}: ${r.warning}`),
];

/** Plain-text table for the terminal. */
export function renderText(report: BenchReport): string {
  const { header, body } = rows(report);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [
    ...preamble(report),
    '',
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...body.map(line),
    ...exportLines(report),
    ...lagLines(report),
    ...capacityLines(report),
    ...deliveryLines(report),
    ...noteLines(report),
    ...warnings(report),
  ].join('\n');
}

/** The same as a Markdown table, for docs/performance.md. */
export function renderMarkdown(report: BenchReport): string {
  const { header, body } = rows(report);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    ...preamble(report).map((l) => `- ${l}`),
    '',
    line(header),
    line(header.map((_, i) => (i === 0 ? '---' : '---:'))),
    ...body.map(line),
    ...exportLines(report).map((l) => `\n${l}`),
    ...lagLines(report).map((l) => `\n${l}`),
    ...capacityLines(report).map((l) => `\n${l}`),
    ...deliveryLines(report).map((l) => `\n${l}`),
    ...noteLines(report).map((l) => `\n${l}`),
    ...warnings(report).map((w) => `\n${w}`),
  ].join('\n');
}

// `node dist/bench/report.js bench/results/<date>.json` prints the Markdown table of a saved run.
if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node dist/bench/report.js <results.json>\n');
    process.exit(2);
  }
  process.stdout.write(`${renderMarkdown(JSON.parse(readFileSync(file, 'utf8')) as BenchReport)}\n`);
}
