import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3Server, type S3TestServer } from './s3-server';
import { createTestApp, type TestApp } from './test-app';

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
