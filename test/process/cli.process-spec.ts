import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Deployment, startDeployment } from './support/deployment';

const ROOT = join(__dirname, '..', '..');

// Each command is a fresh Node process that loads the database layer: seconds apiece on a loaded machine.
jest.setTimeout(300_000);

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/**
 * `licence-server` as an operator has it (docs/deployment.md, The licence-server command): the built tree (dist/,
 * package.json, package-lock.json) installed with `npm ci --omit=dev` into a folder of its own, so no development
 * dependency (no Nest CLI, no TypeScript) is there, and every command run from it with the server's environment only,
 * beside a running server on the same database.
 */
describe('licence-server in a tree installed without development dependencies', () => {
  let tree: string;
  let d: Deployment;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js')))
      throw new Error('dist/src/cli/main.js is missing: run `npm run build` (npm run test:process does)');
    tree = mkdtempSync(join(tmpdir(), 'licence-cli-'));
    cpSync(join(ROOT, 'dist'), join(tree, 'dist'), { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) cpSync(join(ROOT, file), join(tree, file));
    const install = spawnSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: tree,
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production' },
    });
    if (install.status !== 0) throw new Error(`npm ci --omit=dev failed:\n${install.stdout}\n${install.stderr}`);
    d = await startDeployment();
    cliEnv = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tree,
      DATA_DIR: d.env.DATA_DIR,
      ...(d.env.DATABASE_URL ? { DATABASE_URL: d.env.DATABASE_URL } : {}),
    };
  }, 900_000);
  afterAll(async () => {
    await d?.stop();
    if (tree) rmSync(tree, { recursive: true, force: true });
  }, 60_000);

  /**
   * The package's bin in the installed tree, run by its own path (its `#!/usr/bin/env node` line and mode, as the
   * image's /usr/local/bin/licence-server link runs it); `npx: true` through `npx --no-install licence-server`, which
   * finds it by the package's `bin` (slower: npm starts first).
   */
  function cli(args: string[], options: { env?: Record<string, string>; stdin?: string; npx?: boolean } = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const [command, ...prefix] = options.npx ? ['npx', '--no-install', 'licence-server'] : [join(tree, 'dist', 'src', 'cli', 'main.js')];
      const child = spawn(command, [...prefix, ...args], { cwd: tree, env: { ...cliEnv, ...options.env } });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out, err }));
      child.stdin.end(options.stdin ?? '');
    });
  }

  /** A bad input's answer: exit 2 (1 for a bad environment), nothing on stdout, one line on stderr, no stack trace. */
  function expectOneLineRefusal(run: Run, message: RegExp, code = 2): void {
    expect(run).toMatchObject({ code, out: '' });
    const lines = run.err.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(run.err).not.toMatch(/\n\s+at /);
  }

  async function auditOf(
    action: string,
    username: string,
  ): Promise<{ actor_type: string; actor: string; details: Record<string, unknown> }[]> {
    const entries = await d.admin<{ actor_type: string; actor: string; details: Record<string, unknown> }[]>(
      'GET',
      `/api/v1/admin/audit?action=${action}&limit=100`,
    );
    return entries.filter((entry) => entry.details.username === username);
  }

  it('installs no development dependency, so nothing there could build', () => {
    expect(existsSync(join(tree, 'node_modules', '@nestjs', 'cli'))).toBe(false);
    expect(existsSync(join(tree, 'node_modules', '@swc', 'core'))).toBe(false);
    expect(existsSync(join(tree, 'src'))).toBe(false);
  });

  it('--help lists every command, and each command has its own --help', async () => {
    const help = await cli(['--help'], { npx: true });
    expect(help.code).toBe(0);
    for (const command of ['user', 'migrate', 'endorse-key', 'verify-license'])
      expect(help.out).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    for (const [args, says] of [
      [['user', 'create', '--help'], /--role <role>[\s\S]*--products <codes>/],
      [['user', 'reset', '--help'], /USER_PASSWORD/],
      [['migrate', '--help'], /run[\s\S]*revert[\s\S]*show/],
      [['endorse-key', '--help'], /--new-root[\s\S]*--public-key/],
      [['verify-license', '--help'], /--public-key[\s\S]*--jwks[\s\S]*--server/],
    ] as const) {
      const run = await cli([...args]);
      expect({ args, code: run.code }).toEqual({ args, code: 0 });
      expect(run.out).toMatch(says);
    }
  });

  it('user create and user reset change the account and record staff.joined / staff.password_reset by the system', async () => {
    const name = `ops-${randomBytes(4).toString('hex')}`;
    const created = await cli(['user', 'create', name, '--role', 'support', '--products', 'POS_RETAIL'], {
      env: { USER_PASSWORD: 'a long first passphrase' },
    });
    expect(created).toMatchObject({ code: 0, out: `Staff account "${name}" created with the role support, limited to POS_RETAIL.\n` });
    expect(await auditOf('staff.joined', name)).toEqual([
      expect.objectContaining({
        actor_type: 'system',
        actor: 'system',
        details: { username: name, role: 'support', products: ['POS_RETAIL'] },
      }),
    ]);
    const staff = await d.admin<{ username: string; role: string; products: string[] | null }[]>('GET', '/api/v1/admin/staff');
    expect(staff.find((s) => s.username === name)).toMatchObject({ role: 'support', products: ['POS_RETAIL'] });

    // Not on a terminal and no USER_PASSWORD: the first line of stdin.
    const reset = await cli(['user', 'reset', name], { stdin: 'a long second passphrase\n' });
    expect(reset).toMatchObject({ code: 0, out: `Password of staff account "${name}" reset; their open sessions have ended.\n` });
    expect(await auditOf('staff.password_reset', name)).toEqual([
      expect.objectContaining({ actor_type: 'system', actor: 'system', details: { username: name } }),
    ]);

    expectOneLineRefusal(await cli(['user', 'create', name], { env: { USER_PASSWORD: 'a long third passphrase' } }), /exists.*user reset/);
    expectOneLineRefusal(
      await cli(['user', 'reset', `${name}-nobody`], { env: { USER_PASSWORD: 'a long third passphrase' } }),
      /no staff account/,
    );
    expect(await auditOf('staff.joined', name)).toHaveLength(1);
  });

  it('migrate show, revert, show, run: the last migration goes and comes back', async () => {
    const shown = await cli(['migrate', 'show']);
    expect(shown.code).toBe(0);
    const lines = shown.out.trim().split('\n');
    expect(lines.every((line) => line.startsWith('[X] '))).toBe(true);
    const last = lines[lines.length - 1].slice(4);

    expect(await cli(['migrate', 'revert'])).toMatchObject({ code: 0, out: `Reverted: ${last}\n` });
    expect((await cli(['migrate', 'show'])).out.trim().split('\n').pop()).toBe(`[ ] ${last}`);
    expect(await cli(['migrate', 'run'])).toMatchObject({ code: 0, out: `Applied: ${last}\n` });
    expect(await cli(['migrate', 'run'])).toMatchObject({ code: 0, out: 'No pending migrations.\n' });
  });

  it("the operator's npm scripts run dist/ as it is, never building (the image's tree: no sources, no build tools)", () => {
    // The image carries scripts/build-if-stale.mjs beside dist/ and package.json (Dockerfile).
    cpSync(join(ROOT, 'scripts', 'build-if-stale.mjs'), join(tree, 'scripts', 'build-if-stale.mjs'));
    const npmRun = (cwd: string, script: string) => spawnSync('npm', ['run', '--silent', script], { cwd, env: cliEnv, encoding: 'utf8' });
    const shown = npmRun(tree, 'migration:show');
    expect(shown.status).toBe(0);
    expect(shown.stdout).toMatch(/^\[X\] /);
    expect(existsSync(join(tree, 'node_modules', '@swc'))).toBe(false);

    // Without dist/: one line saying what to do, exit 1, and no attempt at a build.
    const bare = mkdtempSync(join(tmpdir(), 'licence-no-dist-'));
    try {
      cpSync(join(tree, 'package.json'), join(bare, 'package.json'));
      cpSync(join(ROOT, 'scripts', 'build-if-stale.mjs'), join(bare, 'scripts', 'build-if-stale.mjs'));
      const refused = npmRun(bare, 'migration:show');
      expect(refused.status).toBe(1);
      expect(refused.stderr.trim()).toBe('dist/ is missing: run `npm ci && npm run build` first');
      expect(existsSync(join(bare, 'dist'))).toBe(false);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it('endorse-key makes an offline root and an endorsement the server stores', async () => {
    const root = join(tree, 'root.pem');
    const made = await cli(['endorse-key', '--new-root', root]);
    expect(made.code).toBe(0);
    expect(made.out).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(readFileSync(root, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);

    const { keys } = await d.admin<{ keys: { key_id: string; status: string; public_key_pem: string }[] }>('GET', '/api/v1/public-keys');
    const active = keys.find((k) => k.status === 'active') ?? keys[0];
    writeFileSync(join(tree, 'key.pem'), active.public_key_pem);
    const endorsed = await cli(['endorse-key', '--root', root, '--public-key', join(tree, 'key.pem')]);
    expect(endorsed.code).toBe(0);
    expect(endorsed.err).toContain(`/api/v1/admin/signing-keys/${active.key_id}/endorsements`);
    await d.admin('POST', `/api/v1/admin/signing-keys/${active.key_id}/endorsements`, JSON.parse(endorsed.out));

    expectOneLineRefusal(await cli(['endorse-key', '--new-root', root]), /never overwritten/);
  });

  it('verify-license checks a licence file against the server’s published keys', async () => {
    const license = await d.admin<{ license_key: string }>('POST', '/api/v1/admin/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      customer_name: 'CLI Customer',
    });
    const seat = JSON.stringify({ license_key: license.license_key, machine_fingerprint: `sha256:${randomBytes(32).toString('hex')}` });
    const post = (path: string, extra = {}) =>
      d.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...JSON.parse(seat), ...extra }),
      });
    const activated = await post('/api/v1/activate', { hostname: 'cli-till' });
    expect({ status: activated.status, body: await activated.text() }).toMatchObject({ status: 200 });
    const res = await post('/api/v1/license-file');
    expect(res.status).toBe(200);
    const file = join(tree, 'machine.lic');
    writeFileSync(file, ((await res.json()) as { license_file: string }).license_file);

    expect(await cli(['verify-license', file, '--server', d.url])).toMatchObject({ code: 0, out: 'valid\n' });
    writeFileSync(join(tree, 'other.pem'), (await cli(['endorse-key', '--new-root', join(tree, 'other-root.pem')])).out);
    const wrongKey = await cli(['verify-license', file, '--public-key', join(tree, 'other.pem')]);
    expect(wrongKey).toMatchObject({ code: 1, out: 'invalid\n' });
  });

  it('bad input: one line on stderr, no stack trace, exit 2', async () => {
    expectOneLineRefusal(await cli(['launch-rockets']), /unknown command 'launch-rockets'/);
    expectOneLineRefusal(await cli(['user', 'create']), /missing required argument 'name'/);
    expectOneLineRefusal(await cli(['user', 'create', 'no spaces please'], { env: { USER_PASSWORD: 'long enough pw' } }), /username/);
    expectOneLineRefusal(await cli(['user', 'create', 'shorty'], { env: { USER_PASSWORD: 'short' } }), /at least 8 characters/);
    expectOneLineRefusal(await cli(['user', 'create', 'kingly', '--role', 'king'], { env: { USER_PASSWORD: 'long enough pw' } }), /king/);
    expectOneLineRefusal(
      await cli(['user', 'create', 'scoped', '--products', 'NO_SUCH'], { env: { USER_PASSWORD: 'long enough pw' } }),
      /unknown product code: NO_SUCH/,
    );
    expectOneLineRefusal(await cli(['migrate', 'sideways']), /unknown command 'sideways'/);
    expectOneLineRefusal(await cli(['endorse-key', '--frobnicate']), /unknown option --frobnicate/);
    expectOneLineRefusal(await cli(['verify-license', join(tree, 'missing.lic'), '--server', d.url]), /missing\.lic/);
    expectOneLineRefusal(
      await cli(['migrate', 'show'], { env: { DATABASE_URL: 'not a url' } }),
      /DATABASE_URL must be a postgres:\/\/ URL/,
      1,
    );
  });
});
