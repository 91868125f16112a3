import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { median } from './load';
import type { BenchReport, ScaleResult } from './report';

/**
 * Two builds measured on the same rows in alternating runs (docs/performance.md, "Before and after in the same run"):
 * base, candidate, candidate, base, base, ... so a machine's drift over the minutes hits both alike. Each row's number is
 * what the bench compares across runs: its ratio to its own same-run baseline, or req/s for a row without one (the
 * admin reads), or deliveries per second (`deliver`). Prints each run's number, each build's median and the change.
 *
 *   node dist/bench/pairs.js <base tree> <candidate tree> --only validate,activate [--pairs 3] [more bench options]
 *
 * Each tree must be built (npm ci && npm run build). Keep the machine otherwise idle while it runs.
 */
interface Options {
  base: string;
  candidate: string;
  pairs: number;
  benchArgs: string[];
  outDir: string;
}

function parse(argv: string[]): Options {
  const [base, candidate, ...rest] = argv;
  if (!base || !candidate || !rest.includes('--only')) {
    console.error('usage: node dist/bench/pairs.js <base tree> <candidate tree> --only <rows> [--pairs N] [bench options]');
    process.exit(2);
  }
  const at = rest.indexOf('--pairs');
  const pairs = at < 0 ? 3 : Number(rest[at + 1]);
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error('--pairs must be a whole number >= 1');
  const benchArgs = at < 0 ? rest : [...rest.slice(0, at), ...rest.slice(at + 2)];
  return { base: resolve(base), candidate: resolve(candidate), pairs, benchArgs, outDir: mkdtempSync(join(tmpdir(), 'bench-pairs-')) };
}

/** Each row's comparable number in one run. */
function rowNumbers(scale: ScaleResult): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, row] of Object.entries(scale.scenarios)) {
    const baseline = row.baseline?.median.rps;
    out[key] = baseline ? row.target.median.rps / baseline : row.target.median.rps;
  }
  if (scale.delivery) {
    out['deliver'] = scale.delivery.perSecond;
    // Until every outcome was recorded too: a drain may send ahead of its outcomes' writes.
    if (scale.delivery.recordedSeconds) out['deliver-recorded'] = Math.round(scale.delivery.events / scale.delivery.recordedSeconds);
  }
  return out;
}

/**
 * Each row's CPU per request (per delivery for `deliver`) in one run, µs: the server's and its PostgreSQL backends'
 * (steadier than req/s on a shared machine).
 */
function rowCpu(scale: ScaleResult): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, row] of Object.entries(scale.scenarios))
    out[key] = (row.target.median.serverUs ?? 0) + (row.target.median.databaseUs ?? 0);
  if (scale.delivery) out['deliver'] = (scale.delivery.serverUs ?? 0) + (scale.delivery.databaseUs ?? 0);
  return out;
}

const commitOf = (tree: string) => execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();

function main(): void {
  const options = parse(process.argv.slice(2));
  const trees = { base: options.base, candidate: options.candidate };
  const runs: Record<'base' | 'candidate', Record<string, number>[]> = { base: [], candidate: [] };
  const cpu: Record<'base' | 'candidate', Record<string, number>[]> = { base: [], candidate: [] };
  for (let pair = 1; pair <= options.pairs; pair++) {
    // Alternate which build goes first, so neither always runs on the warmer or the quieter half of a pair.
    const order: ('base' | 'candidate')[] = pair % 2 ? ['base', 'candidate'] : ['candidate', 'base'];
    for (const which of order) {
      const out = join(options.outDir, `${which}-${pair}.json`);
      const run = spawnSync(process.execPath, ['dist/bench/run.js', ...options.benchArgs, '--out', out], {
        cwd: trees[which],
        encoding: 'utf8',
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      if (run.status !== 0) throw new Error(`${which} run ${pair} failed (${run.status}):\n${run.stderr.slice(-3000)}`);
      const report = JSON.parse(readFileSync(out, 'utf8')) as BenchReport;
      const numbers = rowNumbers(report.scales[0]);
      runs[which].push(numbers);
      cpu[which].push(rowCpu(report.scales[0]));
      const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
      console.log(
        `${which} pair ${pair} (load ${load}): ${Object.entries(numbers)
          .map(([k, v]) => `${k} ${v.toFixed(3)}`)
          .join(', ')}`,
      );
    }
  }
  const rows = [...new Set([...runs.base, ...runs.candidate].flatMap((r) => Object.keys(r)))];
  console.log(
    `\n| row | base (${commitOf(options.base)}) runs | candidate (${commitOf(options.candidate)}) runs | base median | candidate median | change | CPU µs per request, medians (base, candidate) |`,
  );
  console.log('| --- | --- | --- | ---: | ---: | ---: | ---: |');
  const values = (from: Record<string, number>[], row: string) => from.map((r) => r[row]).filter((v): v is number => v !== undefined);
  for (const row of rows) {
    const [b, c] = [values(runs.base, row), values(runs.candidate, row)];
    const [mb, mc] = [median(b), median(c)];
    const change = `${mc >= mb ? '+' : ''}${(((mc - mb) / mb) * 100).toFixed(1)} %`;
    const list = (numbers: number[]) => numbers.map((v) => v.toFixed(3)).join(', ');
    const [cb, cc] = [values(cpu.base, row), values(cpu.candidate, row)];
    const cpuCell = cb.length && cc.length ? `${Math.round(median(cb))}, ${Math.round(median(cc))}` : '-';
    console.log(`| \`${row}\` | ${list(b)} | ${list(c)} | ${mb.toFixed(3)} | ${mc.toFixed(3)} | ${change} | ${cpuCell} |`);
  }
  console.log(`\nresults: ${options.outDir}`);
}

if (require.main === module) main();
