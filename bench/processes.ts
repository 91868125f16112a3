import { ChildProcess, spawn } from 'node:child_process';
import { findFreePort } from '../src/database/processes';

export interface NodeProcess {
  url: string;
  pid: number;
  /** Milliseconds from spawn to the first 200 of the ready URL. */
  readyMs: number;
  output: () => string;
  exited: () => boolean;
  stop: () => Promise<void>;
}

export interface SpawnOptions {
  script: string;
  env: Record<string, string>;
  /** Path answered with 200 once the process is ready (for the server: its database health check). */
  readyPath: string;
  nodeArgs?: string[];
  cwd: string;
  timeoutMs?: number;
}

/** Starts `node script` on a free port and waits for the first 200 of readyPath. */
export async function spawnNode(options: SpawnOptions): Promise<NodeProcess> {
  const port = await findFreePort();
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (d: Buffer) => (output = (output + d.toString()).slice(-20_000));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (exited) throw new Error(`${options.script} exited during start-up:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.script} was not ready within ${options.timeoutMs} ms:\n${output}`);
    }
    try {
      const res = await fetch(url + options.readyPath);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  return {
    url,
    pid: child.pid as number,
    readyMs,
    output: () => output,
    exited: () => exited,
    stop: async () => {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
