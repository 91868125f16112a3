import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/**
 * Summarises a V8 .cpuprofile (node --cpu-prof; `npm run bench -- --profile <dir>`): self time by
 * package and by function, total (inclusive) time of the project's own functions, and the request path's
 * stages (each sample charged to the nearest stage on its stack, so a stage includes the Node and V8 code it
 * calls). With `--requests N` (the requests the profiled server answered) every line also says µs per request.
 * Start-up is left out (from the first request on) unless `--whole-profile`.
 * Usage: node dist/bench/profile-summary.js <file.cpuprofile> [--top 25] [--requests N] [--whole-profile]
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
  /** µs since the previous sample, one per sample. */
  timeDeltas?: number[];
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

/**
 * The stages of a client request (docs/performance.md, Per-middleware cost on the client routes), each named by the
 * packages and project files that make it up. First match wins, so the narrower ones come first.
 */
const STAGES: { stage: string; matches: (pkg: string, frame: CallFrame) => boolean }[] = [
  {
    stage: 'request log + metrics (requestLogger, its close listener)',
    matches: (p) => /^project src\/(common\/http\/logging|metrics\/)/.test(p) || p === 'prom-client' || p === 'pino',
  },
  { stage: 'security headers (helmet, replayed)', matches: (p) => p === 'project src/dashboard/security-headers' || p === 'helmet' },
  { stage: 'size, Content-Type, Host checks, no-store (http-hardening)', matches: (p) => p === 'project src/common/http/http-hardening' },
  {
    stage: 'JSON body parser (express.json, 64 KiB)',
    matches: (p) => ['body-parser', 'raw-body', 'iconv-lite', 'type-is', 'content-type', 'bytes'].includes(p),
  },
  { stage: 'client-route fast path (client-routes)', matches: (p) => p === 'project src/common/http/client-routes' },
  {
    stage: 'pre-routing chain and path tests (middleware-chain, app.setup, dashboard/portal skips)',
    matches: (p) =>
      /^project src\/(common\/http\/(middleware-chain|raw-body)|app\.setup|dashboard\/dashboard\.setup|portal\/portal\.setup)$/.test(p),
  },
  {
    stage: 'rate-limit guard (RateLimitGuard, @nestjs/throttler)',
    matches: (p) => p === 'project src/common/http/throttling' || p === '@nestjs/throttler',
  },
  {
    stage: 'DTO validation pipe (compiled check, class-validator, class-transformer)',
    matches: (p) =>
      /^project src\/common\/http\/(validation\.pipe|compiled-dto)$/.test(p) ||
      p === 'class-validator' ||
      p === 'class-transformer' ||
      p === 'validator',
  },
  { stage: 'exception filter (ApiExceptionFilter)', matches: (p) => p.startsWith('project src/common/errors/') },
  {
    stage: 'JSON canonicalisation for signing (canonicalize, JCS)',
    matches: (p) => p === 'canonicalize' || p === 'project src/signing/license-signature',
  },
  {
    stage: 'signing, main-thread part (crypto.sign is queued to the thread pool)',
    matches: (p) => /^project src\/signing\/(signing\.service|concurrency-limit|envelope)$/.test(p),
  },
  { stage: 'payload building (licence payload, answers)', matches: (p) => /^project src\/activation\/license-payload$/.test(p) },
  {
    stage: 'PostgreSQL client (pg, pg-protocol, pg-pool, prepared statements)',
    matches: (p) =>
      /^(pg|pg-protocol|pg-pool|pg-types|postgres-\w+)$/.test(p) ||
      /^project src\/database\//.test(p) ||
      p === 'project bench/statement-counter',
  },
  { stage: 'TypeORM', matches: (p) => p === 'typeorm' },
  { stage: 'use case (activation/seats/usage services)', matches: (p) => /^project src\/(activation|licenses|events|keyring)\//.test(p) },
  {
    stage: 'Nest route pipeline (router proxy, execution context, guards/pipes consumers, reply)',
    matches: (p) => p.startsWith('@nestjs/') || p === 'rxjs' || p === 'reflect-metadata',
  },
  {
    stage: 'JSON reply (res.json: json-reply seam, or Express res.send, res.set, setCharset)',
    matches: (p, f) => p === 'project src/common/http/json-reply' || (p === 'express' && f.url.endsWith('/response.js')),
  },
  {
    stage: 'Express app and router (app.handle, layer walk, path matching)',
    matches: (p) => p === 'express' || p === 'router' || p === 'path-to-regexp' || p === 'parseurl' || p === 'finalhandler',
  },
  { stage: 'other project code', matches: (p) => p.startsWith('project ') },
  { stage: 'other packages', matches: (p) => !['node (core)', '(v8 / native)'].includes(p) && !p.startsWith('project ') },
];
const NODE_HTTP = 'Node HTTP server (parser callbacks, header storage and checks), not under a stage above';
const RESPONSE_JSON = 'JSON.stringify of the response body (res.json)';
/** Native frames that are system calls: their samples are the kernel's work (and, on a loaded machine, waiting for a core). */
const SYSCALLS = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'rename', 'open', 'close', 'writeFileUtf8']);
const SOCKET_WRITES = 'system calls (socket writes to the client and to PostgreSQL, file writes)';
const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);

/** The stage a stack is charged to: its nearest frame in a stage; JSON.stringify by who called it; else Node core or V8. */
function stageOf(stack: CallFrame[]): string {
  for (let i = 0; i < stack.length; i++) {
    const frame = stack[i];
    if (IDLE.has(frame.functionName)) return frame.functionName;
    const pkg = packageOf(frame.url);
    if (!frame.url && SYSCALLS.has(frame.functionName)) return SOCKET_WRITES;
    if (frame.functionName === 'stringify' && !frame.url) {
      const caller = stack
        .slice(i + 1)
        .map((f) => packageOf(f.url))
        .find((p) => p !== '(v8 / native)' && p !== 'node (core)');
      if (caller === 'express' || caller === '@nestjs/platform-express' || caller === 'project src/common/http/json-reply')
        return RESPONSE_JSON;
      continue;
    }
    const found = STAGES.find((s) => s.matches(pkg, frame));
    if (found) return found.stage;
  }
  return stack.some((f) => packageOf(f.url) === 'node (core)') ? NODE_HTTP : '(v8 / native, no JavaScript caller)';
}

interface SummaryOptions {
  top?: number;
  /** Requests the profiled process answered: adds µs per request to every line. */
  requests?: number;
  /** Include the start-up (by default the summary begins at the first request). */
  wholeProfile?: boolean;
}

export function summarize(profile: CpuProfile, { top = 25, requests, wholeProfile = false }: SummaryOptions = {}): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): CallFrame[] => {
    const frames: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) frames.push((byId.get(cur) as ProfileNode).callFrame);
    return frames;
  };
  // Start-up (module loading, Nest's bootstrap, migrations) is left out: the summary starts at the first sample taken
  // while Node's HTTP server handed a request on, which is after the server listens.
  const first = wholeProfile
    ? 0
    : Math.max(
        0,
        profile.samples.findIndex((id) => stackOf(id).some((f) => f.functionName === 'parserOnIncoming')),
      );
  const totalSamples = profile.samples.length - first;
  // Time per node: the sampling intervals when the profile has them, else an even share of the profile's length.
  const evenUs = profile.samples.length ? (profile.endTime - profile.startTime) / profile.samples.length : 0;
  const timeUs = new Map<number, number>();
  for (let i = first; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    timeUs.set(id, (timeUs.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? evenUs));
  }
  const totalUs = [...timeUs.values()].reduce((a, b) => a + b, 0);
  const busyUs = [...timeUs]
    .filter(([id]) => !IDLE.has((byId.get(id) as ProfileNode).callFrame.functionName))
    .reduce((a, [, us]) => a + us, 0);
  const cell = (us: number) =>
    `${((100 * us) / (totalUs || 1)).toFixed(1).padStart(5)} %` + (requests ? `  ${(us / requests).toFixed(1).padStart(6)} µs/req` : '');

  const sumBy = (key: (n: ProfileNode) => string | undefined) => {
    const sums = new Map<string, number>();
    for (const [id, us] of timeUs) {
      const k = key(byId.get(id) as ProfileNode);
      if (k !== undefined) sums.set(k, (sums.get(k) ?? 0) + us);
    }
    return [...sums].sort((a, b) => b[1] - a[1]);
  };
  const special = (n: ProfileNode) => (IDLE.has(n.callFrame.functionName) ? n.callFrame.functionName : undefined);
  const packages = sumBy((n) => special(n) ?? packageOf(n.callFrame.url));
  const functions = sumBy(
    (n) => special(n) ?? `${n.callFrame.functionName || '(anonymous)'} ${packageOf(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`,
  );
  const stages = sumBy((n) => stageOf(stackOf(n.id)));

  // Inclusive time of project functions: samples whose stack contains the function (counted once per stack).
  const inclusive = new Map<string, number>();
  for (const [id, us] of timeUs) {
    const seen = new Set<string>();
    for (const f of stackOf(id)) {
      const where = packageOf(f.url);
      if (!where.startsWith('project ')) continue;
      const key = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
      if (!seen.has(key)) {
        inclusive.set(key, (inclusive.get(key) ?? 0) + us);
        seen.add(key);
      }
    }
  }
  return [
    `${totalSamples} samples over ${(totalUs / 1e6).toFixed(1)} s${first ? ' from the first request' : ''}, busy ${(busyUs / 1e6).toFixed(1)} s` +
      (requests ? `; ${requests} requests: ${(busyUs / requests).toFixed(1)} µs of main-thread time per request` : ''),
    '',
    'stages of the request path (each sample charged to the nearest stage on its stack):',
    ...stages.map(([k, us]) => `${cell(us)}  ${k}`),
    '',
    'self time by package:',
    ...packages.slice(0, top).map(([k, us]) => `${cell(us)}  ${k}`),
    '',
    'self time by function:',
    ...functions.slice(0, top).map(([k, us]) => `${cell(us)}  ${k}`),
    '',
    'total time of project functions:',
    ...[...inclusive]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${cell(us)}  ${k}`),
  ].join('\n');
}

if (require.main === module) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string' }, requests: { type: 'string' }, 'whole-profile': { type: 'boolean', default: false } },
  });
  const [file, legacyTop] = positionals;
  if (!file) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [--top 25] [--requests N] [--whole-profile]\n');
    process.exit(2);
  }
  const top = Number(values.top ?? legacyTop ?? 25);
  const requests = values.requests === undefined ? undefined : Number(values.requests);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(`${summarize(profile, { top, requests, wholeProfile: values['whole-profile'] })}\n`);
}
