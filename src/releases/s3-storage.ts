import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import type { DownloadSource, ReleaseStorage } from './release-storage';

export interface S3StorageOptions {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, R2, ...); AWS itself when absent. Path-style addressing when set. */
  endpoint?: string;
  region: string;
}

// A multipart upload holds at most QUEUE parts of PART_BYTES in memory: 2 x 8 MiB, well under the 64 MiB an upload may cost.
const PART_BYTES = 8 * 1024 * 1024;
const QUEUE = 2;

/**
 * Any S3-compatible store through the official SDK (docs/releases.md, Storage): streamed multipart uploads,
 * downloads by presigned URL. Credentials come from the SDK's standard chain (AWS_ACCESS_KEY_ID, ...).
 */
export class S3ReleaseStorage implements ReleaseStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly options: S3StorageOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    });
  }

  async write(key: string, body: Readable): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.options.bucket, Key: key, Body: body, ContentType: 'application/octet-stream' },
      partSize: PART_BYTES,
      queueSize: QUEUE,
      leavePartsOnError: false,
    });
    // A failed body stream must fail the upload (lib-storage waits for data that never comes otherwise).
    const failed = new Promise<never>((_, reject) => body.once('error', reject));
    try {
      await Promise.race([upload.done(), failed]);
    } catch (err) {
      await upload.abort().catch(() => undefined);
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  async source(key: string, filename: string, seconds: number, whole: boolean): Promise<DownloadSource> {
    if (whole) {
      // A redirect would carry the client's Range to the store, which may read it another way: stream the object.
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return { kind: 'stream', body: object.Body as Readable };
    }
    const command = new GetObjectCommand({
      Bucket: this.options.bucket,
      Key: key,
      ResponseContentDisposition: `attachment; filename="${filename.replace(/["\\]/g, '_')}"`,
    });
    return { kind: 'redirect', url: await getSignedUrl(this.client, command, { expiresIn: seconds }) };
  }

  destroy(): void {
    this.client.destroy();
  }
}
