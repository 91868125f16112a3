#!/usr/bin/env node
// Builds (scripts/build.mjs) only when dist/ is missing or older than a source: the npm scripts that run the built
// server or a command call this, so CI builds once and every later step reuses it (docs/testing.md, One build).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');
const sources = ['src', 'scripts', 'bench', 'ormconfig.ts', '.swcrc', 'package.json'];

function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, entry) => Math.max(latest, newest(join(path, entry))), stat.mtimeMs);
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = Math.max(...sources.map((source) => newest(join(root, source))));
if (built > 0 && changed <= built) process.exit(0);
const result = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
process.exit(result.status ?? 1);
