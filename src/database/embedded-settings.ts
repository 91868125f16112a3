import { totalmem } from 'node:os';
import { join } from 'node:path';

/**
 * shared_buffers of the embedded server: an eighth of the machine's memory, at least PostgreSQL's own default
 * (128 MB) and at most 1 GB. The default alone held under a tenth of the benchmark's 1M-licence tables, so every
 * validation read its rows through the kernel's page cache (docs/performance.md). Pages are only used once read.
 */
export function embeddedSharedBuffersMb(memoryBytes: number = totalmem()): number {
  return Math.min(1024, Math.max(128, Math.floor(memoryBytes / 8 / 2 ** 20)));
}

/** The longest Unix-domain socket path Linux takes (sun_path holds 108 bytes with the closing NUL). */
export const SOCKET_PATH_MAX_BYTES = 107;

/** Where the embedded server's Unix socket goes, or why it has none (docs/configuration.md, Database URL). */
export type SocketPlan = { dir: string; path: string } | { dir: undefined; reason: string };

/**
 * The embedded server listens on a Unix socket in its data folder (`<dir>/.s.PGSQL.<port>`) when that path fits the
 * kernel's limit and the folder's name can be written in `unix_socket_directories`; otherwise it is TCP only, and
 * `reason` says why (docs/performance.md, Performance round 3: a round trip over the socket costs less CPU than over
 * loopback TCP).
 */
export function socketPlan(dir: string, port: number): SocketPlan {
  const path = join(dir, `.s.PGSQL.${port}`);
  const bytes = Buffer.byteLength(path);
  if (bytes > SOCKET_PATH_MAX_BYTES)
    return { dir: undefined, reason: `its socket path would be ${bytes} bytes long, over the limit of ${SOCKET_PATH_MAX_BYTES}` };
  // The setting is a comma-separated list whose items may be double-quoted: a quote cannot be written in one.
  if (dir.includes('"')) return { dir: undefined, reason: "the data folder's path contains a double quote" };
  return { dir, path };
}

/** A connection URL through the socket in `socketDir` (pg's `host=/path` form, docs/configuration.md). */
export function socketUrl(user: string, password: string, socketDir: string, port: number, database: string): string {
  const auth = `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;
  return `postgresql://${auth}@/${encodeURIComponent(database)}?host=${encodeURIComponent(socketDir)}&port=${port}`;
}

/**
 * The embedded server's settings on its command line: loopback TCP for tools, and the Unix socket of `socket` in the
 * data folder (never the system's socket folder, where a system PostgreSQL's would clash) for the server (cheaper
 * round trips, docs/performance.md, Performance round 3). Anything that starts the cluster again uses these, so the
 * server finds its socket after a restart.
 */
export function embeddedPostgresFlags(socket: SocketPlan, memoryBytes: number = totalmem()): string[] {
  return [
    ...['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socket.dir ? `"${socket.dir}"` : ''}`],
    ...['-c', 'unix_socket_permissions=0700', '-c', 'max_connections=200'],
    ...['-c', `shared_buffers=${embeddedSharedBuffersMb(memoryBytes)}MB`],
  ];
}
