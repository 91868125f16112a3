import type { FirstKey } from '../serve';

/** The resolved AppConfig (JSON) the primary hands each worker. */
export const WORKER_CONFIG_ENV = 'LICENCE_SERVER_WORKER_CONFIG';

/** worker -> primary: listening; `firstKey` when this worker created the keyring's first key. */
export const READY = 'licence:ready';

export interface ReadyMessage {
  type: typeof READY;
  firstKey?: FirstKey;
}

export const isReadyMessage = (message: unknown): message is ReadyMessage =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === READY;
