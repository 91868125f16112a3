import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: this file runs from clients/node/build-test/test/. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

export interface TestServer {
  url: string;
  apiKey: string;
  dataDir: string;
  /** Admin API call; throws on a non-2xx answer. */
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
  start(): Promise<void>;
  remove(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the BUILT server of this repository (`npm run build` at the root first) on its own embedded PostgreSQL,
 * as a vendor would run it. `stop()` then `start()` keeps the data (an outage); `remove()` deletes everything.
 */
export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'licence-client-test-'));
  const port = await freePort();
  const apiKey = `test-key-${randomBytes(12).toString('hex')}`;
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    child = spawn(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'main.js')], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        PORT: String(port),
        DATA_DIR: dataDir,
        API_KEY: apiKey,
        ADMIN_PASSWORD: 'client-test-password',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_ACTIVATE: '1000',
        RATE_LIMIT_DEACTIVATE: '1000',
        RATE_LIMIT_VALIDATE: '1000',
        RATE_LIMIT_HEARTBEAT: '1000',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-10_000)));
    child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-10_000)));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited during start-up:\n${output}`);
      if (Date.now() > deadline) throw new Error(`server did not start:\n${output}`);
      try {
        if ((await fetch(`${url}/api/v1/health`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  };

  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };

  await start();
  return {
    url,
    apiKey,
    dataDir,
    start,
    stop,
    async remove() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    async admin<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${url}/api/v1/admin${path}`, {
        method,
        headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const parsed = (await res.json()) as T;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
      return parsed;
    },
  };
}

/** A licence of a seed product; `policy` and `limits` as the admin API takes them. */
export async function createLicense(
  server: TestServer,
  overrides: Record<string, unknown> = {},
): Promise<{ id: number; license_key: string }> {
  return server.admin('POST', '/licenses', {
    product_code: 'POS_RETAIL',
    license_type: 'YEARLY',
    customer_name: 'Client Test d.o.o.',
    ...overrides,
  });
}

export async function serverPublicKey(server: TestServer): Promise<{ key_id: string; public_key_pem: string }> {
  return (await fetch(`${server.url}/api/v1/public-key`)).json() as Promise<{ key_id: string; public_key_pem: string }>;
}

export const fingerprintOf = (seed: string) => `sha256:${Buffer.from(seed.padEnd(32, '.')).toString('hex').slice(0, 64)}`;
