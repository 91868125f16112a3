import { join, resolve } from 'node:path';
import { AppConfig } from './config/app-config';
import { ConfigError } from './config/config.error';
import { resolveWebConcurrency, validateEnv } from './config/env.schema';
import { buildConfig, GeneratedSecrets } from './config/load-config';
import { EmbeddedDatabase } from './database/embedded-database';
import { runMigrations } from './database/migrate';

export interface Runtime {
  config: AppConfig;
  generated: GeneratedSecrets;
  embedded?: EmbeddedDatabase;
  migrations: string[];
  /** WEB_CONCURRENCY resolved: how many worker processes serve requests (1: this process does). */
  workers: number;
}

export const EMBEDDED_DATABASE_NAME = 'licence_server';

/**
 * Everything that must happen before Nest starts: validate the environment, create the
 * secrets on first start (the keyring creates its first signing key when Nest starts), start the embedded PostgreSQL when DATABASE_URL
 * is unset, and apply migrations.
 */
export async function prepareRuntime(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<Runtime> {
  const vars = validateEnv(env);
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = vars.DATABASE_URL;
  if (!databaseUrl) {
    const dataDir = resolve(vars.DATA_DIR);
    log(`DATABASE_URL is unset: starting the embedded PostgreSQL in ${join(dataDir, 'postgres')}`);
    embedded = await EmbeddedDatabase.start({ dir: join(dataDir, 'postgres'), secretsDir: dataDir });
    databaseUrl = await embedded.ensureDatabase(EMBEDDED_DATABASE_NAME);
    log(`  ${embedded.describeTransport()}`);
  }
  try {
    const { config, generated } = buildConfig(vars, databaseUrl);
    const migrations = await runMigrations(config.databaseUrl).catch((err: Error) => {
      throw new ConfigError(`DATABASE_URL: cannot migrate the database: ${err.message}`);
    });
    return { config, generated, embedded, migrations, workers: resolveWebConcurrency(vars.WEB_CONCURRENCY) };
  } catch (err) {
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
}
