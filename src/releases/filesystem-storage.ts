import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DownloadSource, ReleaseStorage } from './release-storage';

/** Files under one folder (DATA_DIR/releases by default): the zero-setup store (docs/releases.md, Storage). */
export class FilesystemReleaseStorage implements ReleaseStorage {
  readonly kind = 'filesystem' as const;
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The key's path, never outside the root (keys are the server's own, this is a second fence). */
  private pathOf(key: string): string {
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new Error(`storage key outside the releases folder: ${key}`);
    return path;
  }

  async write(key: string, body: Readable): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.part`;
    try {
      await pipeline(body, createWriteStream(partial, { flags: 'w' }));
      await rename(partial, path);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  source(key: string): Promise<DownloadSource> {
    return Promise.resolve({ kind: 'file', path: this.pathOf(key) });
  }
}
