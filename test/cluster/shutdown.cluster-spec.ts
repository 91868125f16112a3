import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessRunning } from '../../src/database/processes';
import { startServer } from '../support/server-process';

/** The built server with no DATABASE_URL: SIGTERM drains, stops the embedded PostgreSQL, exits 0. */
describe('graceful shutdown with the embedded database', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'licence-shutdown-'));
    chmodSync(dataDir, 0o755);
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it.each(['SIGTERM', 'SIGINT'] as const)('%s: in-flight requests finish, then the server and its PostgreSQL stop', async (signal) => {
    const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    const postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(isProcessRunning(postmaster)).toBe(true);
    const apiKey = readFileSync(join(dataDir, 'api-key'), 'utf8').trim();
    // Requests under way when the signal arrives are answered in full, never cut off by a stopped
    // database (a 5xx). Connections still in the kernel's accept queue may be refused: that is TCP.
    let answeredBeforeSignal!: () => void;
    const firstAnswer = new Promise<void>((r) => (answeredBeforeSignal = r));
    const inFlight = Promise.allSettled(
      Array.from({ length: 30 }, () =>
        fetch(`${server.url}/api/v1/admin/stats`, { headers: { 'x-api-key': apiKey } }).then((r) => {
          answeredBeforeSignal();
          return r.status;
        }),
      ),
    );
    await firstAnswer;
    const code = await server.stop(signal);
    const statuses = await inFlight;
    expect(code).toBe(0);
    expect(isProcessRunning(postmaster)).toBe(false);
    const answered = statuses.filter((s) => s.status === 'fulfilled').map((s) => s.value);
    expect(answered.every((status) => status === 200)).toBe(true);
    expect(answered.length).toBeGreaterThan(0);
  });
});
