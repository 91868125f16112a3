import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { findFreePort } from '../../src/database/processes';

export interface ServerProcess {
  url: string;
  port: number;
  pid: number;
  /** Output so far (stdout and stderr), for failure messages. */
  output: () => string;
  /** Sends a signal and waits for the process to exit; returns its exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
  exited: Promise<number | null>;
}

const ROOT = join(__dirname, '..', '..');

/**
 * Starts the BUILT server (`node dist/src/main.js`, run `npm run build` first) as a real
 * process with the given environment, and waits until it answers its liveness probe. The wait is a hang guard, not a
 * speed goal: at load average 20 a start with migrations took over 60 s (docs/testing.md, On a busy machine).
 */
export async function startServer(env: Record<string, string>, timeoutMs = 120_000): Promise<ServerProcess> {
  const port = env.PORT ? Number(env.PORT) : await findFreePort();
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`server exited during start-up:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become live within ${timeoutMs} ms:\n${output}`);
    }
    try {
      const res = await fetch(`${url}/api/v1/health/live`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    pid: child.pid as number,
    output: () => output,
    exited,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (!gone) child.kill(signal);
      return exited;
    },
  };
}
