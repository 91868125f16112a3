import 'reflect-metadata';
import cluster from 'node:cluster';
import { prepareRuntime } from './bootstrap';
import { runPrimary } from './cluster/primary';
import { runWorker } from './cluster/worker';
import { ConfigError } from './config/config.error';
import { KeyringService } from './keyring/keyring.service';
import { printGenerated, say, serve } from './serve';

async function main(): Promise<void> {
  // WEB_CONCURRENCY > 1: this is one of the workers the primary forked (src/cluster).
  if (cluster.isWorker) return runWorker();
  const runtime = await prepareRuntime(process.env, say);
  if (runtime.migrations.length) say(`Applied migrations: ${runtime.migrations.join(', ')}`);
  if (runtime.workers > 1) return runPrimary(runtime);
  const { config } = runtime;
  const app = await serve(config, { release: async () => runtime.embedded?.stop() });
  printGenerated(runtime, app.get(KeyringService).firstKey);
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
