import { Client } from 'pg';
import { verifySignedLicense } from '../../src/signing/license-signature';
import { fingerprint } from '../support/factories';
import { startServer, ServerProcess } from '../support/server-process';
import { ClusterEnv, createClusterEnv } from './cluster-env';

/** docs/signing.md, The keyring, across processes: one keyring in PostgreSQL, a rotation on one instance used by the other within 5 s. */
describe('keyring shared by two instances', () => {
  let cluster: ClusterEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let ip = 0;
  const clientIp = () => `203.0.113.${++ip}`;

  beforeAll(async () => {
    cluster = await createClusterEnv();
    // Both start at once on an empty keyring: exactly one key may come out of it.
    [a, b] = await Promise.all([startServer(cluster.env), startServer(cluster.env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.cleanup();
  });

  const json = async <T>(res: Promise<Response>): Promise<T> => (await (await res).json()) as T;
  const activeKeyId = (server: ServerProcess) => json<{ key_id: string }>(fetch(`${server.url}/api/v1/public-key`)).then((k) => k.key_id);
  const post = (server: ServerProcess, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
      body: JSON.stringify(body),
    });

  it('concurrent first starts created one active key, and both instances publish it', async () => {
    const client = new Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ key_id: string; status: string }>('SELECT key_id, status FROM signing_keys');
    await client.end();
    expect(rows).toEqual([{ key_id: expect.stringMatching(/^[0-9a-f]{16}$/), status: 'active' }]);
    expect(await activeKeyId(a)).toBe(rows[0].key_id);
    expect(await activeKeyId(b)).toBe(rows[0].key_id);
  });

  it('a rotation on A: B signs with the new key within 5 s, and the old payload still verifies with the retired key', async () => {
    const created = await post(
      a,
      '/api/v1/admin/licenses',
      { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Keyring Co' },
      {
        'x-api-key': cluster.apiKey,
      },
    );
    const { license_key } = (await created.json()) as { license_key: string };
    const body = { license_key, machine_fingerprint: fingerprint('keyring-cluster'), hostname: 'till' };
    const before = (await (await post(b, '/api/v1/activate', body)).json()) as { license: { key_id: string }; signature: string };

    const rotated = await post(a, '/api/v1/admin/signing-keys/rotate', {}, { 'x-api-key': cluster.apiKey });
    expect(rotated.status).toBe(201);
    const newKeyId = ((await rotated.json()) as { key_id: string }).key_id;
    expect(newKeyId).not.toBe(before.license.key_id);
    const started = Date.now();

    let after: { license: { key_id: string }; signature: string } | undefined;
    while (Date.now() - started < 5000) {
      after = (await (await post(b, '/api/v1/activate', body)).json()) as typeof after;
      if (after?.license.key_id === newKeyId) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const elapsed = Date.now() - started;
    expect(after?.license.key_id).toBe(newKeyId);
    expect(elapsed).toBeLessThan(5000);

    const published = await json<{ keys: { key_id: string; status: string; public_key_pem: string }[] }>(
      fetch(`${b.url}/api/v1/public-keys`),
    );
    expect(published.keys.map((k) => [k.key_id, k.status])).toEqual([
      [newKeyId, 'active'],
      [before.license.key_id, 'retired'],
    ]);
    expect(verifySignedLicense(before, published.keys[1].public_key_pem)).toEqual({ valid: true });
    expect(verifySignedLicense(after, published.keys[0].public_key_pem)).toEqual({ valid: true });
    expect(await activeKeyId(b)).toBe(newKeyId);
  });

  it('an instance with another KEYRING_SECRET refuses to start, naming KEYRING_SECRET, and creates no key', async () => {
    await expect(startServer({ ...cluster.env, KEYRING_SECRET: 'a-different-keyring-secret-0123456789' })).rejects.toThrow(
      /KEYRING_SECRET does not decrypt the active signing key/,
    );
    const client = new Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM signing_keys');
    await client.end();
    expect(rows[0].n).toBe(2);
  });
});
