import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 .cpuprofile (node --cpu-prof; `npm run bench -- --profile <dir>`): self time by
 * package and by function, and total (inclusive) time of the project's own functions.
 * Usage: node dist/bench/profile-summary.js <file.cpuprofile> [top=25]
 */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

/** Which package a frame belongs to: node_modules/<pkg>, the project (src/...), node internals, or V8 itself. */
export function packageOf(url: string): string {
  if (!url) return '(v8 / native)';
  const own = url.match(/\/(?:dist|bench-dist)\/((?:src|bench)\/.*)\.js$/);
  if (own) return `project ${own[1]}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  return url.startsWith('node:') ? 'node (core)' : url;
}

export function summarize(profile: CpuProfile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totalSamples = profile.samples.length;
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const idle = new Set(['(idle)', '(program)', '(garbage collector)']);
  const pct = (n: number) => `${((100 * n) / totalSamples).toFixed(1).padStart(5)} %`;

  const selfBy = (key: (n: ProfileNode) => string) => {
    const sums = new Map<string, number>();
    for (const n of profile.nodes) {
      const h = hits.get(n.id) ?? 0;
      if (h) sums.set(key(n), (sums.get(key(n)) ?? 0) + h);
    }
    return [...sums].sort((a, b) => b[1] - a[1]);
  };
  const special = (n: ProfileNode) => (idle.has(n.callFrame.functionName) ? n.callFrame.functionName : undefined);
  const packages = selfBy((n) => special(n) ?? packageOf(n.callFrame.url));
  const functions = selfBy(
    (n) => special(n) ?? `${n.callFrame.functionName || '(anonymous)'} ${packageOf(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`,
  );

  // Inclusive time of project functions: samples whose stack contains the function (counted once per stack).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, h] of hits) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = (byId.get(cur) as ProfileNode).callFrame;
      const where = packageOf(f.url);
      if (!where.startsWith('project ')) continue;
      const key = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
      if (!seen.has(key)) {
        inclusive.set(key, (inclusive.get(key) ?? 0) + h);
        seen.add(key);
      }
    }
  }
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  return [
    `${totalSamples} samples over ${seconds.toFixed(1)} s`,
    '',
    'self time by package:',
    ...packages.slice(0, top).map(([k, n]) => `${pct(n)}  ${k}`),
    '',
    'self time by function:',
    ...functions.slice(0, top).map(([k, n]) => `${pct(n)}  ${k}`),
    '',
    'total time of project functions:',
    ...[...inclusive]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, n]) => `${pct(n)}  ${k}`),
  ].join('\n');
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top ? Number(top) : 25)}\n`);
}
