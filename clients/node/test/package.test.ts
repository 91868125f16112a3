/**
 * The package as a vendor gets it: `npm pack`, the tarball installed (offline) into an ES module app, a CommonJS app
 * and a TypeScript app compiled with the package's types, each run against a real server and against a stand-in
 * server that signs with its own key.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createLicense, fingerprintOf, REPO_ROOT, serverPublicKey, startTestServer, type TestServer } from './server.js';
import { startStandIn, type StandIn } from './standin.js';

const PACKAGE_DIR = join(REPO_ROOT, 'clients', 'node');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = createRequire(join(PACKAGE_DIR, 'package.json')).resolve('typescript/bin/tsc');

// One program, three module systems: only the first lines differ.
const PROGRAM = `
async function main(entry) {
  const env = process.env;
  const client = new LicenseClient({
    serverUrl: env.SERVER_URL,
    statePath: env.STATE_PATH,
    appSalt: 'vendor-app-2026',
    publicKeys: [{ public_key_pem: env.PINNED_PEM }],
    fingerprint: env.FINGERPRINT,
    product: 'POS_RETAIL',
    retries: 0,
  });
  const out = { entry };
  try {
    await client.activate(env.LICENSE_KEY);
    out.activate = 'ok';
    out.valid = (await client.validate()).valid;
  } catch (err) {
    out.activate = err instanceof VerificationError || err instanceof LicenseServerError ? err.code : String(err);
  }
  const result = await client.check();
  out.check = result.ok ? 'ok' : result.reason;
  console.log(JSON.stringify(out));
}
`;

const TS_PROGRAM = `import { LicenseClient, LicenseServerError, VerificationError, type CheckResult } from '@licence-server/client';

async function main(entry: string): Promise<void> {
  const env = process.env;
  const client = new LicenseClient({
    serverUrl: env.SERVER_URL ?? '',
    statePath: env.STATE_PATH ?? '',
    appSalt: 'vendor-app-2026',
    publicKeys: [{ public_key_pem: env.PINNED_PEM ?? '' }],
    fingerprint: env.FINGERPRINT,
    product: 'POS_RETAIL',
    retries: 0,
  });
  // The types are real, not any: a wrong argument does not compile.
  // @ts-expect-error activate takes the licence key as a string
  void (() => client.activate(42));
  const out: Record<string, unknown> = { entry };
  try {
    await client.activate(env.LICENSE_KEY ?? '');
    out.activate = 'ok';
    out.valid = (await client.validate()).valid;
  } catch (err) {
    out.activate = err instanceof VerificationError || err instanceof LicenseServerError ? err.code : String(err);
  }
  const result: CheckResult = await client.check();
  out.check = result.ok ? 'ok' : result.reason;
  console.log(JSON.stringify(out));
}

void main(require.resolve('@licence-server/client'));
`;

let work: string;
let tarball: string;
let packedFiles: string[];
let server: TestServer;
let standIn: StandIn;
const apps: Record<'esm' | 'cjs' | 'ts', string[]> = { esm: [], cjs: [], ts: [] };

function makeApp(name: string, type: 'module' | 'commonjs', files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type }));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  // The package has no runtime dependency, so installing its tarball needs no registry.
  execFileSync(npm, ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: dir, stdio: 'pipe' });
  return dir;
}

before(
  async () => {
    work = mkdtempSync(join(tmpdir(), 'client-package-'));
    const packed = JSON.parse(
      execFileSync(npm, ['pack', '--json', '--pack-destination', work], {
        cwd: PACKAGE_DIR,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, packed[0].filename);
    packedFiles = packed[0].files.map((f) => f.path);

    const esm = makeApp('esm-app', 'module', {
      'app.js': `import { LicenseClient, LicenseServerError, VerificationError } from '@licence-server/client';\n${PROGRAM}\nawait main(import.meta.resolve('@licence-server/client'));\n`,
    });
    apps.esm = [join(esm, 'app.js')];
    const cjs = makeApp('cjs-app', 'commonjs', {
      'app.js': `const { LicenseClient, LicenseServerError, VerificationError } = require('@licence-server/client');\n${PROGRAM}\nvoid main(require.resolve('@licence-server/client'));\n`,
    });
    apps.cjs = [join(cjs, 'app.js')];
    const ts = makeApp('ts-app', 'commonjs', {
      'app.ts': TS_PROGRAM,
      'tsconfig.json': JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'ES2022',
          strict: true,
          outDir: 'out',
          typeRoots: [join(PACKAGE_DIR, 'node_modules', '@types')],
          // No "node" here: the package's declarations name it themselves (/// <reference types="node" />), so an
          // application whose tsconfig lists no types (TypeScript 6's default) still compiles.
          types: [],
        },
        files: ['app.ts'],
      }),
    });
    execFileSync(process.execPath, [tsc, '-p', join(ts, 'tsconfig.json')], { cwd: ts, stdio: 'pipe' });
    apps.ts = [join(ts, 'out', 'app.js')];

    server = await startTestServer();
    standIn = await startStandIn();
  },
  { timeout: 180_000 },
);

after(async () => {
  await standIn?.close();
  await server?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

// Asynchronous: the stand-in server answers from this process, so its event loop must keep running.
async function runApp(kind: keyof typeof apps, env: Record<string, string>): Promise<Record<string, unknown>> {
  const statePath = join(mkdtempSync(join(work, 'state-')), 'licence.json');
  const { stdout } = await promisify(execFile)(process.execPath, apps[kind], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', STATE_PATH: statePath, ...env },
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
}

describe('the packed library in vendor applications', () => {
  it('the tarball holds both builds with their types and the README, and nothing else', () => {
    for (const file of [
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
      'README.md',
    ]) {
      assert.ok(packedFiles.includes(file), `${file} in ${packedFiles.join(', ')}`);
    }
    assert.ok(
      packedFiles.every((f) => f.startsWith('dist/') || ['README.md', 'package.json'].includes(f)),
      packedFiles.join(', '),
    );
  });

  for (const kind of ['esm', 'cjs', 'ts'] as const) {
    it(`${kind} app: activates, validates and checks against the real server`, async () => {
      const { license_key } = await createLicense(server);
      const pinned = await serverPublicKey(server);
      const out = await runApp(kind, {
        SERVER_URL: server.url,
        PINNED_PEM: pinned.public_key_pem,
        LICENSE_KEY: license_key,
        FINGERPRINT: fingerprintOf(`pkg-${kind}`),
      });
      assert.deepEqual({ ...out, entry: undefined }, { entry: undefined, activate: 'ok', valid: true, check: 'ok' });
      assert.match(
        String(out.entry),
        kind === 'esm'
          ? /node_modules\/@licence-server\/client\/dist\/esm\/index\.js$/
          : /node_modules\/@licence-server\/client\/dist\/cjs\/index\.js$/,
      );
    });

    it(`${kind} app: refuses a stand-in server that signs with its own key`, async () => {
      const pinned = await serverPublicKey(server);
      const out = await runApp(kind, {
        SERVER_URL: standIn.url,
        PINNED_PEM: pinned.public_key_pem,
        LICENSE_KEY: 'POS-AAAAA-BBBBB-CCCCC-DDDDD',
        FINGERPRINT: fingerprintOf(`pkg-${kind}`),
      });
      assert.equal(out.activate, 'UNKNOWN_KEY');
      assert.equal(out.check, 'NO_LICENSE');
    });
  }
});
