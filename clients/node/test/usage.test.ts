import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LicenseClient, LicenseServerError, VerificationError } from '../src/index.js';
import { createLicense, fingerprintOf, serverPublicKey, startTestServer, type TestServer } from './server.js';

let server: TestServer;
let pinned: { key_id: string; public_key_pem: string };

before(async () => {
  server = await startTestServer();
  pinned = await serverPublicKey(server);
});
after(async () => server?.remove());

function clientFor(seed: string, serverUrl = server.url) {
  const statePath = join(mkdtempSync(join(tmpdir(), 'client-usage-')), 'licence-state.json');
  return new LicenseClient({
    serverUrl,
    statePath,
    appSalt: 'usage-test',
    publicKeys: [pinned],
    fingerprint: fingerprintOf(seed),
    product: 'POS_RETAIL',
    retries: 2,
    timeoutMs: 5000,
  });
}

/** A proxy to the server: every request reaches it, but the client gets a 503 instead of the first `lose` usage answers. */
async function lossyProxy(lose: number): Promise<{ url: string; bodies: string[]; close: () => Promise<void> }> {
  const bodies: string[] = [];
  let lost = 0;
  const target = new URL(server.url);
  const proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url?.endsWith('/usage')) bodies.push(body.toString());
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (up: IncomingMessage) => {
          const parts: Buffer[] = [];
          up.on('data', (c: Buffer) => parts.push(c));
          up.on('end', () => {
            // The server counted; the client never hears of it (a lost answer).
            if (req.url?.endsWith('/usage') && lost < lose) {
              lost += 1;
              res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"SERVICE_UNAVAILABLE","message":"lost"}}');
              return;
            }
            res.writeHead(up.statusCode ?? 502, up.headers).end(Buffer.concat(parts));
          });
        },
      );
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((resolve) => proxy.close(() => resolve())) };
}

describe('usage() against a real server (docs/client-api.md, Usage)', () => {
  it('counts uses with a verified, signed answer, and reports USAGE_LIMIT_REACHED as a typed error', async () => {
    const { license_key } = await createLicense(server, { policy: { max_uses: 5, uses_period: 'month' } });
    const client = clientFor('usage-1');
    await client.activate(license_key, { hostname: 'meter-01' });
    const first = await client.usage();
    assert.equal(first.uses, 1);
    assert.equal(first.max_uses, 5);
    assert.equal(first.remaining, 4);
    assert.equal(first.key_id, pinned.key_id);
    const second = await client.usage({ increment: 4 });
    assert.equal(second.remaining, 0);
    await assert.rejects(client.usage(), (err: unknown) => {
      assert.ok(err instanceof LicenseServerError);
      assert.equal(err.code, 'USAGE_LIMIT_REACHED');
      assert.equal(err.status, 403);
      assert.equal(err.details.remaining, 0);
      return true;
    });
  });

  it('a retry after a lost answer carries the same idempotency key and counts once', async () => {
    const { license_key } = await createLicense(server, { policy: { max_uses: 100, uses_period: 'month' } });
    const direct = clientFor('usage-retry');
    await direct.activate(license_key, { hostname: 'meter-02' });
    const proxy = await lossyProxy(1);
    try {
      const client = clientFor('usage-retry', proxy.url);
      await client.activate(license_key, { hostname: 'meter-02' });
      const answer = await client.usage({ increment: 3 });
      assert.equal(answer.uses, 3, 'the retry got the first count, not a second one');
      assert.equal(proxy.bodies.length, 2);
      const keys = proxy.bodies.map((b) => (JSON.parse(b) as { idempotency_key: string }).idempotency_key);
      assert.equal(keys[0], keys[1]);
      assert.match(keys[0], /^[A-Za-z0-9_-]{8,128}$/);
      // A new call is a new use.
      assert.equal((await client.usage()).uses, 4);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a tampered answer (the signature no longer holds)', async () => {
    const { license_key } = await createLicense(server, { policy: { max_uses: 10, uses_period: 'month' } });
    // Tamper with what the server said: the signature no longer holds.
    const original = globalThis.fetch;
    const tamperingFetch: typeof fetch = async (input, init) => {
      const response = await original(input, init);
      if (!String(input).endsWith('/usage')) return response;
      const body = (await response.json()) as Record<string, unknown>;
      return new Response(JSON.stringify({ ...body, remaining: 1_000_000 }), { status: response.status, headers: response.headers });
    };
    const tampered = new LicenseClient({
      serverUrl: server.url,
      statePath: join(mkdtempSync(join(tmpdir(), 'client-usage-')), 'licence-state.json'),
      appSalt: 'usage-test',
      publicKeys: [pinned],
      fingerprint: fingerprintOf('usage-untrusted'),
      fetch: tamperingFetch,
    });
    await tampered.activate(license_key, { hostname: 'meter-03' });
    await assert.rejects(tampered.usage(), (err: unknown) => err instanceof VerificationError && err.code === 'INVALID_SIGNATURE');
  });
});
