import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** One export of every licence, timed, with the server's resident memory sampled throughout. */
export interface ExportBenchResult {
  label: string;
  rows: number;
  expectedRows: number;
  bytes: number;
  seconds: number;
  rowsPerSecond: number;
  /** Server process resident set, MiB: before the export, its peak during it, and the growth (must stay under 100). */
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssGrowthMiB: number;
  /** RSS (MiB) after each tenth of the rows: flat means constant memory, rising means it grows with the rows. */
  rssByTenthMiB: number[];
  warning?: string;
}

/** The export's bound (docs/admin-api.md, Exports): a million rows must not grow the server's memory by 100 MB. */
export const EXPORT_RSS_GROWTH_LIMIT_MIB = 100;
const SAMPLE_MS = 20;
const EXPORT_PATH = '/api/v1/admin/licenses/export?format=csv';

/** A field of /proc/<pid>/status in KiB (VmRSS now, VmHWM the peak since the last reset); 0 off Linux. */
function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

/**
 * Downloads the licence export as CSV, counting rows (CRLF records, header excluded) and bytes, while it
 * samples the server's RSS every 20 ms; the kernel's peak (VmHWM, reset first through clear_refs) catches
 * a spike between samples.
 */
export async function measureExport(url: string, apiKey: string, serverPid: number, expectedRows: number): Promise<ExportBenchResult> {
  const before = statusKiB(serverPid, 'VmRSS');
  let kernelPeak = false;
  try {
    writeFileSync(`/proc/${serverPid}/clear_refs`, '5');
    kernelPeak = true;
  } catch {
    // not Linux, or not allowed: the samples alone
  }
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, statusKiB(serverPid, 'VmRSS'))), SAMPLE_MS);
  const started = performance.now();
  let bytes = 0;
  let lineEnds = 0;
  const byTenth: number[] = [];
  let nextTenth = Math.max(1, Math.ceil(expectedRows / 10));
  try {
    const res = await fetch(url + EXPORT_PATH, { headers: { 'x-api-key': apiKey } });
    if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}: ${await res.text()}`);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lineEnds++;
      while (lineEnds - 1 >= nextTenth && byTenth.length < 10) {
        byTenth.push(mib(statusKiB(serverPid, 'VmRSS')));
        nextTenth += Math.max(1, Math.ceil(expectedRows / 10));
      }
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  peak = Math.max(peak, statusKiB(serverPid, 'VmRSS'), kernelPeak ? statusKiB(serverPid, 'VmHWM') : 0);
  const rows = lineEnds - 1;
  const growth = mib(peak - before);
  const problems = [
    rows !== expectedRows ? `exported ${rows} rows, expected ${expectedRows}` : '',
    growth >= EXPORT_RSS_GROWTH_LIMIT_MIB ? `server RSS grew by ${growth} MiB (limit ${EXPORT_RSS_GROWTH_LIMIT_MIB})` : '',
  ].filter(Boolean);
  return {
    label: `GET ${EXPORT_PATH}`,
    rows,
    expectedRows,
    bytes,
    seconds: Math.round(seconds * 100) / 100,
    rowsPerSecond: Math.round(rows / seconds),
    rssBeforeMiB: mib(before),
    rssPeakMiB: mib(peak),
    rssGrowthMiB: growth,
    rssByTenthMiB: byTenth,
    warning: problems.length ? problems.join('; ') : undefined,
  };
}
