#!/usr/bin/env node
// The one build (docs/testing.md, One build): SWC compiles src/, scripts/, bench/ and ormconfig.ts into dist/ with the
// same settings the tests use (.swcrc), in seconds, without type-checking (`npm run typecheck` does that), then copies
// the database functions' SQL files the migrations load. dist/.build-stamp records when; `npm run build:stale` and the
// operator scripts rebuild only when a source is newer.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const swc = join(dirname(createRequire(import.meta.url).resolve('@swc/cli/package.json')), 'bin', 'swc.js');

rmSync(dist, { recursive: true, force: true });
const started = Date.now();
const result = spawnSync(
  process.execPath,
  [
    swc,
    'src',
    'scripts',
    'bench',
    'ormconfig.ts',
    '--out-dir',
    'dist',
    '--config-file',
    '.swcrc',
    '--extensions',
    '.ts',
    '--ignore',
    '**/*.spec.ts',
    '--quiet',
  ],
  { cwd: root, stdio: 'inherit' },
);
if (result.status !== 0) process.exit(result.status ?? 1);

const sqlDir = join(root, 'src', 'database', 'sql');
mkdirSync(join(dist, 'src', 'database', 'sql'), { recursive: true });
for (const file of readdirSync(sqlDir)) if (file.endsWith('.sql')) cpSync(join(sqlDir, file), join(dist, 'src', 'database', 'sql', file));
writeFileSync(join(dist, '.build-stamp'), `${new Date().toISOString()}\n`);
console.log(`build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s (SWC)`);
