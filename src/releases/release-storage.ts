import type { Readable } from 'node:stream';

/** How a download is handed over: a local file the server sends (with Range), or a presigned URL it redirects to. */
export type DownloadSource = { kind: 'file'; path: string } | { kind: 'redirect'; url: string };

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
  /** How to hand `key` to a client for `seconds`, as `filename`. */
  source(key: string, filename: string, seconds: number): Promise<DownloadSource>;
}

export const RELEASE_STORAGE = Symbol('RELEASE_STORAGE');
