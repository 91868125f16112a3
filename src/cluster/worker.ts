import type { AppConfig } from '../config/app-config';
import { KeyringService } from '../keyring/keyring.service';
import { serve } from '../serve';
import { READY, WORKER_CONFIG_ENV, type ReadyMessage } from './messages';

/**
 * A worker of WEB_CONCURRENCY > 1: the primary has started the database, applied the migrations and resolved the
 * configuration (secrets included), and passes it in the environment. The worker serves requests on the shared port
 * and tells the primary when it listens; on SIGTERM (from the primary, or the terminal's SIGINT) it drains and exits.
 */
export async function runWorker(): Promise<void> {
  const json = process.env[WORKER_CONFIG_ENV];
  if (!json) throw new Error(`a cluster worker needs ${WORKER_CONFIG_ENV} (it is started by the primary, not by hand)`);
  delete process.env[WORKER_CONFIG_ENV];
  const config = { ...(JSON.parse(json) as AppConfig), clusterWorker: true };
  const app = await serve(config, { announceStop: false });
  const ready: ReadyMessage = { type: READY, firstKey: app.get(KeyringService).firstKey };
  process.send?.(ready);
}
