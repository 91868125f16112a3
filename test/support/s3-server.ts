import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { createTestApp, type TestApp } from './test-app';

/** s3rver's own fixed credentials: the SDK signs with them, s3rver checks them. */
export const S3_ACCESS_KEY = 'S3RVER';
export const S3_SECRET_KEY = 'S3RVER';

export interface S3TestServer {
  endpoint: string;
  bucket: string;
  close: () => Promise<void>;
}

/** A real S3-compatible server (s3rver) on loopback with one empty bucket, its files in a temporary folder. */
export async function startS3Server(bucket = 'releases-test'): Promise<S3TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'licence-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    endpoint,
    bucket,
    close: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A test app whose releases live in this storage: the filesystem under its own DATA_DIR, or a real S3 server on loopback. */
export async function startReleaseApp(
  storage: 'filesystem' | 's3',
  maxBytes: number,
): Promise<{ t: TestApp; s3Endpoint: string | undefined; close: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'licence-releases-'));
  let s3: S3TestServer | undefined;
  let s3Config;
  if (storage === 's3') {
    s3 = await startS3Server();
    process.env.AWS_ACCESS_KEY_ID = S3_ACCESS_KEY;
    process.env.AWS_SECRET_ACCESS_KEY = S3_SECRET_KEY;
    s3Config = { bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1' };
  }
  const t = await createTestApp({ dataDir, releases: { maxBytes, linkSeconds: 600, ...(s3Config ? { s3: s3Config } : {}) } });
  return {
    t,
    s3Endpoint: s3?.endpoint,
    close: async () => {
      await t.close();
      await s3?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
