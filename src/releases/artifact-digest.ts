import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** Raised by ArtifactDigest when a body passes the limit (the upload answers 413). */
export class ArtifactTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`The artifact is larger than ${limit} bytes`);
  }
}

/**
 * Passes an upload's bytes through unchanged while counting them and computing SHA-256 and SHA-512 on the way
 * (docs/releases.md, Uploading artifacts): nothing is held beyond the chunk in hand. Fails with ArtifactTooLarge
 * once more than `limit` bytes came.
 */
export class ArtifactDigest extends Transform {
  private readonly sha256: Hash = createHash('sha256');
  private readonly sha512: Hash = createHash('sha512');
  size = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.limit) return callback(new ArtifactTooLarge(this.limit));
    this.sha256.update(chunk);
    this.sha512.update(chunk);
    callback(null, chunk);
  }

  /** Both digests in hex; call once the stream has ended. */
  digests(): { sha256: string; sha512: string } {
    return { sha256: this.sha256.digest('hex'), sha512: this.sha512.digest('hex') };
  }
}
