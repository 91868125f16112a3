import type { Readable } from 'node:stream';

/**
 * How a download is handed over: a local file the server sends (with Range), a presigned URL it redirects to, or the
 * whole object streamed through the server (a store's own reading of a Range this server ignores must not decide).
 */
export type DownloadSource = { kind: 'file'; path: string } | { kind: 'redirect'; url: string } | { kind: 'stream'; body: Readable };

/**
 * Where artifact bytes live (docs/releases.md, Storage): nothing else in the server knows which store is used.
 * Keys are made by the server (never from a filename).
 */
export interface ReleaseStorage {
  readonly kind: 'filesystem' | 's3';
  /** Streams `body` to `key`; the object appears only once the whole stream is stored (a failed write leaves nothing). */
  write(key: string, body: Readable): Promise<void>;
  /** Removes `key`; a missing object is no error. */
  remove(key: string): Promise<void>;
  /**
   * How to hand `key` to a client for `seconds`, as `filename`. `whole`: the request's Range is one the server ignores
   * (docs/releases.md, Download links), so the whole object must be sent whatever the client asks of the store.
   */
  source(key: string, filename: string, seconds: number, whole: boolean): Promise<DownloadSource>;
}

export const RELEASE_STORAGE = Symbol('RELEASE_STORAGE');
