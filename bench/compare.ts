import { readFileSync } from 'node:fs';
import type { BenchReport, ScenarioResult } from './report';

/**
 * Compares stored runs row by row (docs/performance.md, Rerunning it): for each scenario of the first scale, each run's
 * ratio to its own same-run baseline, req/s, CPU per request (server + PostgreSQL) and statements per request, as a
 * Markdown table. Ratios are what compare across runs: each is measured against a baseline run alternately with it.
 *
 *   node dist/bench/compare.js before.json after.json [more.json ...]
 */
function cell(row: ScenarioResult | undefined): string {
  if (!row) return '-';
  const m = row.target.median;
  const n = (v: number | undefined) => (v ?? 0).toLocaleString('en-US');
  const ratio = row.ratio === undefined ? '' : `**${row.ratio.toFixed(2)}** · `;
  return `${ratio}${n(m.rps)} req/s · ${n(m.serverUs)}+${n(m.databaseUs)} µs · ${(m.statements ?? 0).toFixed(2)} stmts`;
}

function lag(row: ScenarioResult | undefined): string {
  return row?.webhookLag ? `p99 ${row.webhookLag.p99Ms.toLocaleString('en-US')} ms` : '-';
}

export function compare(reports: { name: string; report: BenchReport }[]): string {
  const scenarios = reports.map((r) => r.report.scales[0].scenarios);
  const keys = [...new Set(scenarios.flatMap((s) => Object.keys(s)))];
  const head = `| row | ${reports.map((r) => `${r.name} (${r.report.commit}, ${r.report.date.slice(0, 16)}Z)`).join(' | ')} |`;
  const rule = `| --- | ${reports.map(() => '---').join(' | ')} |`;
  const rows = keys.map((key) => {
    const label = scenarios.find((s) => s[key])?.[key].label ?? key;
    return `| \`${key}\` ${label} | ${scenarios.map((s) => cell(s[key])).join(' | ')} |`;
  });
  const lags = keys
    .filter((key) => scenarios.some((s) => s[key]?.webhookLag))
    .map((key) => `| \`${key}\` delivery lag | ${scenarios.map((s) => lag(s[key])).join(' | ')} |`);
  return [head, rule, ...rows, ...lags].join('\n');
}

if (require.main === module) {
  const files = process.argv.slice(2);
  if (files.length < 2) {
    console.error('usage: node dist/bench/compare.js <run.json> <run.json> [...]');
    process.exit(2);
  }
  const reports = files.map((file) => ({
    name: file.replace(/^.*\//, '').replace(/\.json$/, ''),
    report: JSON.parse(readFileSync(file, 'utf8')) as BenchReport,
  }));
  console.log(compare(reports));
}
