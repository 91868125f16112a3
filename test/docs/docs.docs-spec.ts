import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment, startDeployment } from '../process/support/deployment';

/**
 * Docs that run (docs/testing.md, Docs that run): every shell block of README.md and docs/*.md marked runnable
 * (```sh runnable) runs under `bash -euo pipefail` against a server started as the README says (the built server, a
 * fresh DATA_DIR, the zero-configuration start that generates DATA_DIR/api-key). A file's blocks run in order in one
 * working folder of its own, where `data` is the server's DATA_DIR; the first block that exits non-zero fails the file
 * with its path and line.
 */

const ROOT = join(__dirname, '..', '..');
/** An opening fence whose info string says runnable (indented too, as in a numbered list): its indent and language. */
const MARKED = /^(\s*)```\s*(\S*)\s+runnable\s*$/;
const BLOCK_TIMEOUT_MS = 120_000;

interface Block {
  file: string;
  line: number;
  code: string;
}

/** The runnable blocks of one Markdown file, with the line of each opening fence. */
function runnableBlocks(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marked = MARKED.exec(lines[i]);
    if (!marked) continue;
    const [, indent, language] = marked;
    if (language !== 'sh' && language !== 'bash') throw new Error(`${file}:${i + 1}: only sh and bash blocks can be runnable`);
    const end = lines.findIndex((line, j) => j > i && /^\s*```\s*$/.test(line));
    if (end < 0) throw new Error(`${file}:${i + 1}: a runnable block is never closed`);
    const code = lines.slice(i + 1, end).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line));
    blocks.push({ file, line: i + 1, code: code.join('\n') });
    i = end;
  }
  return blocks;
}

const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const BLOCKS = FILES.map((file) => ({ file, blocks: runnableBlocks(file) })).filter((f) => f.blocks.length > 0);

/** Runs one block under bash -euo pipefail; resolves with its exit code and output (stdout and stderr, interleaved). */
function runBlock(block: Block, cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-s'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(-8_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), BLOCK_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdin.end(block.code);
  });
}

describe('docs that run', () => {
  let d: Deployment;
  let scratch: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    // Inside the repository, so that `npx canonicalize` in a recipe finds this project's copy instead of the registry.
    mkdirSync(join(ROOT, '.docs-run'), { recursive: true });
    scratch = mkdtempSync(join(ROOT, '.docs-run', 'run-'));
    // As root, the embedded PostgreSQL runs as the postgres user, which must be able to pass through to DATA_DIR.
    chmodSync(scratch, 0o755);
    d = await startDeployment({}, { dataDir: join(scratch, 'data'), generatedApiKey: true });
    // A licence activated on one machine, for the client recipes (docs/testing.md, Docs that run, lists the variables).
    const fp = `sha256:${'ab'.repeat(32)}`;
    const license = await d.admin<{ license_key: string }>('POST', '/api/v1/admin/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      customer_name: 'Docs Reader',
    });
    const activated = await d.request('/api/v1/activate', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ license_key: license.license_key, machine_fingerprint: fp, hostname: 'docs-till' }),
    });
    if (activated.status !== 200) throw new Error(`activate: ${activated.status} ${await activated.text()}`);
    env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      LANG: 'C.UTF-8',
      BASE_URL: d.url,
      API: `${d.url}/api/v1`,
      API_KEY: d.apiKey,
      LICENSE_KEY: license.license_key,
      FP: fp,
    };
  }, 180_000);
  afterAll(async () => {
    await d?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  it('finds runnable blocks (```sh runnable) in README.md and docs/', () => {
    expect(BLOCKS.length).toBeGreaterThan(0);
  });

  for (const { file, blocks } of BLOCKS) {
    it(
      `${file}: ${blocks.length} runnable block(s) exit 0 in order`,
      async () => {
        const cwd = join(scratch, file.replace(/[/.]/g, '_'));
        mkdirSync(cwd);
        symlinkSync(join(scratch, 'data'), join(cwd, 'data'));
        for (const block of blocks) {
          const { code, output } = await runBlock(block, cwd, env);
          if (process.env.DOCS_DEBUG) process.stdout.write(`${block.file}:${block.line}\n${output}\n`);
          if (code !== 0) {
            throw new Error(
              `${block.file}:${block.line}: the runnable block exited ${code}\n--- block\n${block.code}\n--- output\n${output}`,
            );
          }
        }
      },
      BLOCK_TIMEOUT_MS * 3,
    );
  }
});
