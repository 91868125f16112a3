import { createHash, randomBytes } from 'node:crypto';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3Server, type S3TestServer } from '../support/s3-server';
import { startServer, ServerProcess } from '../support/server-process';
import { ClusterEnv, createClusterEnv } from './cluster-env';

/**
 * Release storage as deployed (docs/releases.md, Storage): the server started as a process from environment variables
 * only, with its artifacts in an S3-compatible store (s3rver on loopback); an upload and a download over HTTP.
 */
describe('releases on S3, configured from the environment', () => {
  let s3: S3TestServer;
  let cluster: ClusterEnv;
  let server: ServerProcess;

  beforeAll(async () => {
    s3 = await startS3Server('releases-process');
    cluster = await createClusterEnv({
      RELEASES_S3_BUCKET: s3.bucket,
      RELEASES_S3_ENDPOINT: s3.endpoint,
      RELEASES_S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: S3_ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: S3_SECRET_KEY,
      RELEASES_LINK_SECONDS: '120',
      PUBLIC_URL: 'http://127.0.0.1:1',
    });
    server = await startServer(cluster.env);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await cluster?.cleanup();
    await s3?.close();
  });

  it('uploads to the bucket and hands an activated machine a link that redirects to the presigned object', async () => {
    const admin = { 'X-API-Key': cluster.apiKey, 'Content-Type': 'application/json' };
    const api = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init);
    const release = (await (
      await api('/api/v1/admin/products/POS_RETAIL/releases', {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ version: '5.0.0' }),
      })
    ).json()) as { id: number };
    expect(release.id).toEqual(expect.any(Number));
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const uploaded = await api(`/api/v1/admin/releases/${release.id}/artifacts/Till%20Setup%205.0.0.exe?platform=win32&arch=x64`, {
      method: 'PUT',
      headers: { 'X-API-Key': cluster.apiKey, 'Content-Type': 'application/octet-stream' },
      body: bytes,
    });
    expect(uploaded.status).toBe(201);
    expect(((await uploaded.json()) as { sha256: string }).sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect((await api(`/api/v1/admin/releases/${release.id}/publish`, { method: 'POST', headers: admin })).status).toBe(200);

    const licence = (await (
      await api('/api/v1/admin/licenses', {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'S3 buyer' }),
      })
    ).json()) as { license_key: string };
    const fp = 'sha256:' + 'b'.repeat(64);
    const client = { 'Content-Type': 'application/json' };
    const activated = await api('/api/v1/activate', {
      method: 'POST',
      headers: client,
      body: JSON.stringify({ license_key: licence.license_key, machine_fingerprint: fp, hostname: 'till' }),
    });
    expect(activated.status).toBe(200);
    const check = (await (
      await api('/api/v1/releases/check', {
        method: 'POST',
        headers: client,
        body: JSON.stringify({ license_key: licence.license_key, machine_fingerprint: fp, platform: 'win32', current_version: '4.0.0' }),
      })
    ).json()) as { update: { version: string; artifacts: { url: string }[] } };
    expect(check.update.version).toBe('5.0.0');
    // Links are built on PUBLIC_URL; this test reaches the same path on the process itself.
    const link = new URL(check.update.artifacts[0].url);
    expect(link.origin).toBe('http://127.0.0.1:1');
    const redirect = await api(link.pathname, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location') as string;
    expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/`)).toBe(true);
    const downloaded = Buffer.from(await (await fetch(location)).arrayBuffer());
    expect(downloaded.equals(bytes)).toBe(true);
    const ranged = await fetch(location, { headers: { Range: 'bytes=5-9' } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(5, 10))).toBe(true);
  });
});
