// `node scripts/build-if-stale.mjs`: runs `npm run build` only when dist/ is older than what it is built from, so
// `npm start`, the test tiers that run the built server and the bench start at once on an up-to-date tree. `--check`
// builds nothing: it only refuses a missing or outdated dist/ (the operator's npm scripts, which run dist/ as built).
// `--stamp` records a finished build and makes the package's `bin` executable (npm runs it as `postbuild`, whichever
// builder `build` uses: neither keeps a file mode). Without a stamp, the built entry points' own times stand in for it.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
const BIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const SOURCES = ['src', 'scripts', 'bench', 'ormconfig.ts', 'package.json', 'package-lock.json', 'nest-cli.json', '.swcrc'];

/** The newest modification time (ms) of a file, or of any file under a folder; 0 when absent. */
function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its folder's time
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** When dist/ was last built: the stamp, else the oldest of the built entry points; 0 when there is no build. */
function builtAt() {
  if (existsSync(STAMP)) return statSync(STAMP).mtimeMs;
  const entries = ['dist/src/main.js', 'dist/src/cli/main.js'].map((file) => join(ROOT, file));
  return entries.every((file) => existsSync(file)) ? Math.min(...entries.map((file) => statSync(file).mtimeMs)) : 0;
}

function sourcesChangedAt() {
  const tsconfigs = readdirSync(ROOT).filter((name) => /^tsconfig.*\.json$/.test(name));
  return Math.max(...[...SOURCES, ...tsconfigs].map((name) => newestMtime(join(ROOT, name))));
}

/** One line on stderr and exit 1. */
function fail(message) {
  console.error(message);
  process.exit(1);
}

if (process.argv.includes('--check')) {
  // The operator's npm scripts (docs/deployment.md, The licence-server command): they run the dist/ there is and never
  // build. No dist/ at all, or (where there are sources) a dist/ older than them, is one line and exit 1, not a run of
  // code that is not what the checkout says.
  if (!builtAt()) fail('dist/ is missing: run `npm ci && npm run build` first');
  if (existsSync(join(ROOT, 'src')) && sourcesChangedAt() > builtAt()) fail('dist/ is older than the sources: run `npm run build` first');
} else if (process.argv.includes('--stamp')) {
  if (existsSync(BIN)) chmodSync(BIN, 0o755);
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
} else if (!existsSync(join(ROOT, 'src')) || !existsSync(join(ROOT, 'node_modules', '@swc', 'cli', 'package.json'))) {
  // A production tree has nothing to build from or nothing to build with: the Docker image (dist/ without sources) or a
  // checkout installed with `npm ci --omit=dev` (no SWC). The operator's commands run the dist/ it has; with no dist/
  // at all, say what to do rather than fail inside a build that cannot run.
  if (!builtAt()) fail('dist/ is missing and the build tools are not installed: run `npm ci && npm run build` first');
} else if (sourcesChangedAt() > builtAt()) {
  // The build's own output goes to stderr: stdout belongs to the command that follows (it may be piped).
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (build.status !== 0) process.exit(build.status ?? 1);
  if (!existsSync(STAMP)) writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  if (existsSync(BIN)) chmodSync(BIN, 0o755);
}
