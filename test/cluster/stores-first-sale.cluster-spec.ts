import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/stores.md, First sale in five minutes: its runnable blocks, in order, under `bash -euo pipefail` in one folder
 * (as `npm run test:docs` runs them), against the built server they start themselves. The path a seller follows is
 * the path tested: a product and a plan made with curl, a fixture event signed with the secret, the licence and the
 * key mail read back.
 */
const ROOT = join(__dirname, '..', '..');
const SECTION = /^## First sale in five minutes\n([\s\S]*?)(?=^## )/m;

function firstSaleBlocks(): { line: number; code: string }[] {
  const text = readFileSync(join(ROOT, 'docs', 'stores.md'), 'utf8');
  const section = SECTION.exec(text);
  if (!section) throw new Error('docs/stores.md has no "First sale in five minutes" section');
  const offset = text.slice(0, section.index).split('\n').length;
  const lines = section[1].split('\n');
  const blocks: { line: number; code: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s+runnable\s*$/.test(lines[i])) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    blocks.push({ line: offset + i + 1, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

function run(code: string, cwd: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-s'], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(-8_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
    child.stdin.end(code);
  });
}

describe('docs/stores.md, First sale in five minutes', () => {
  let cwd: string;

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'src', 'main.js'))) throw new Error('build first: npm run build (npm run test:cluster does)');
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    // Inside the repository, as a reader's clone is: `npm prefix` and `npm run` find the project from there.
    cwd = mkdtempSync(join(ROOT, 'test-results', 'first-sale-'));
    // As root, the embedded PostgreSQL runs as the postgres user, which must pass through to DATA_DIR.
    chmodSync(cwd, 0o755);
  });
  afterAll(async () => {
    // A block that failed midway leaves the server it started: stop it (and its embedded PostgreSQL) first.
    const pidFile = join(cwd, 'shop.pid');
    if (existsSync(pidFile))
      await run(
        `kill "$(cat shop.pid)" 2> /dev/null || true; for _ in $(seq 60); do kill -0 "$(cat shop.pid)" 2> /dev/null || break; sleep 1; done`,
        cwd,
      );
    rmSync(cwd, { recursive: true, force: true });
  }, 90_000);

  it('has its five blocks marked runnable', () => {
    expect(firstSaleBlocks()).toHaveLength(5);
  });

  it('each block exits 0 in order: the sale makes a licence for the buyer and mails the key', async () => {
    for (const block of firstSaleBlocks()) {
      const { status, output } = await run(block.code, cwd);
      if (status !== 0) throw new Error(`docs/stores.md:${block.line}: the runnable block exited ${status}\n${output}`);
    }
    const licences = JSON.parse(readFileSync(join(cwd, 'licences.json'), 'utf8')) as { customer_name: string; license_key: string }[];
    expect(licences).toEqual([expect.objectContaining({ customer_name: 'Jelena Marković', license_key: expect.stringMatching(/^INV-/) })]);
    expect(readFileSync(join(cwd, 'answer.json'), 'utf8')).toContain('"action":"purchase"');
  }, 600_000);
});
