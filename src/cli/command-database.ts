import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EMBEDDED_DATABASE_NAME, prepareRuntime } from '../bootstrap';
import { validateEnv } from '../config/env.schema';
import { EmbeddedDatabase, isProcessRunning } from '../database/embedded-database';

/** The database a command-line tool should use, and how to let go of it afterwards. */
export interface CommandDatabase {
  url: string;
  release: () => Promise<void>;
}

/**
 * DATABASE_URL when set. Otherwise the embedded PostgreSQL under DATA_DIR: the running server's
 * instance when there is one (read from its postmaster.pid, never stopped or restarted from here),
 * else started for the command (and migrated, unless `migrate` is false) and stopped after it.
 */
export async function commandDatabase(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  { migrate = true }: { migrate?: boolean } = {},
): Promise<CommandDatabase> {
  const vars = validateEnv(env);
  if (vars.DATABASE_URL) return { url: vars.DATABASE_URL, release: () => Promise.resolve() };
  const dataDir = resolve(vars.DATA_DIR);
  const running = runningEmbeddedPort(join(dataDir, 'postgres'));
  const passwordFile = join(dataDir, 'postgres-password');
  if (running && existsSync(passwordFile)) {
    const password = encodeURIComponent(readFileSync(passwordFile, 'utf8').trim());
    return { url: `postgres://postgres:${password}@127.0.0.1:${running}/${EMBEDDED_DATABASE_NAME}`, release: () => Promise.resolve() };
  }
  if (!migrate) {
    log(`DATABASE_URL is unset: starting the embedded PostgreSQL in ${join(dataDir, 'postgres')}`);
    const embedded = await EmbeddedDatabase.start({ dir: join(dataDir, 'postgres'), secretsDir: dataDir });
    return { url: await embedded.ensureDatabase(EMBEDDED_DATABASE_NAME), release: () => embedded.stop() };
  }
  const runtime = await prepareRuntime(env, log);
  return { url: runtime.config.databaseUrl, release: async () => runtime.embedded?.stop() };
}

/** Port of a live embedded PostgreSQL in `dir` (postmaster.pid: line 1 pid, line 4 port), if any. */
function runningEmbeddedPort(dir: string): number | undefined {
  try {
    const lines = readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    return Number.isInteger(pid) && pid > 0 && isProcessRunning(pid) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}
