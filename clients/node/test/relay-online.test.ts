import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { armor, KeySet, LicenseClient, LicenseServerError, VerificationError, verifyRelayPool } from '../src/index.js';
import { createLicense, fingerprintOf, REPO_ROOT, serverPublicKey, startTestServer, type TestServer } from './server.js';

/** A real relay (the repository's build) lending a pool the vendor server issued: clients/relay-for-tests.mjs. */
async function startRelay(server: TestServer, licenseKey: string, options: { seats?: number; forged?: boolean } = {}) {
  const args = [
    join(REPO_ROOT, 'clients', 'relay-for-tests.mjs'),
    '--server',
    server.url,
    '--api-key',
    server.apiKey,
    '--license',
    licenseKey,
  ];
  args.push('--seats', String(options.seats ?? 2), ...(options.forged ? ['--forged'] : []));
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`relay-for-tests exited ${code}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    ...(JSON.parse(line) as { url: string; pool_id: string }),
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

/** A pool request as `licence-server relay init` prints it (docs/relay.md): a relay's key and machine, asking for seats. */
function poolRequest(licenseKey: string, seats: number) {
  const relay = generateKeyPairSync('ed25519');
  const request = armor('RELAY POOL REQUEST', {
    license_key: licenseKey,
    relay_fingerprint: fingerprintOf('relay machine'),
    relay_public_key: relay.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    seats,
  });
  return { request, relay };
}

/** Pools issued by the real vendor server (the repository's build), checked with the client's own code. */
describe('relay pools issued by the vendor server', () => {
  let server: TestServer;
  let keys: KeySet;
  before(async () => {
    server = await startTestServer();
    keys = KeySet.from([await serverPublicKey(server)]);
  });
  after(async () => server?.remove());

  it('a pool the server signed verifies with the shipped key; the same pool with more seats is refused', async () => {
    const license = await createLicense(server, { limits: { max_installations: 5 } });
    const { request } = poolRequest(license.license_key, 3);
    const issued = await server.admin<{ pool_id: string; pool_file: string; expires_at: string }>('POST', '/relay-pools', { request });
    const verified = verifyRelayPool(issued.pool_file, { keys, now: new Date(), product: 'POS_RETAIL' });
    assert.ok(verified.ok, JSON.stringify(verified));
    assert.equal(verified.value.pool.pool_id, issued.pool_id);
    assert.equal(verified.value.pool.seats, 3);
    assert.equal(verified.value.pool.license.license_key, license.license_key);

    const file = JSON.parse(Buffer.from(issued.pool_file.split('\n').slice(1, -2).join(''), 'base64').toString('utf8')) as {
      pool: { seats: number };
      envelope: unknown;
    };
    const forged = armor('RELAY POOL', { ...file, pool: { ...file.pool, seats: 300 } });
    const refused = verifyRelayPool(forged, { keys, now: new Date() });
    assert.deepEqual(refused.ok ? null : refused.reason, 'POOL_MISMATCH');
    const otherVendor = KeySet.from([
      { public_key_pem: generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    ]);
    const unknown = verifyRelayPool(issued.pool_file, { keys: otherVendor, now: new Date() });
    assert.deepEqual(unknown.ok ? null : unknown.reason, 'SIGNATURE_INVALID');
  });
});

/** Leases from a real relay started from a pool the vendor server issued (docs/clients.md, Relay leases). */
describe('leaseFromRelay() against a real relay', () => {
  let server: TestServer;
  let shipped: { key_id: string; public_key_pem: string };
  before(
    async () => {
      server = await startTestServer();
      shipped = await serverPublicKey(server);
    },
    { timeout: 120_000 },
  );
  after(async () => server?.remove());

  const client = (machine: string) =>
    new LicenseClient({
      serverUrl: server.url,
      statePath: join(mkdtempSync(join(tmpdir(), 'relay-online-')), 'state.json'),
      appSalt: 'relay-online',
      publicKeys: [shipped],
      fingerprint: fingerprintOf(machine),
      product: 'POS_RETAIL',
      retries: 0,
    });

  it(
    'leases a seat per machine, renews it, refuses one more than the pool holds, and takes a released seat back',
    { timeout: 120_000 },
    async () => {
      const license = await createLicense(server, { limits: { max_installations: 5 } });
      const relay = await startRelay(server, license.license_key, { seats: 2 });
      try {
        const first = await client('relay machine 1').leaseFromRelay(relay.url, { hostname: 'bench-1' });
        assert.equal(first.pool.pool_id, relay.pool_id);
        assert.equal(first.lease.machine_fingerprint, fingerprintOf('relay machine 1'));
        assert.ok(first.expiresAt.getTime() > Date.now());
        const again = await client('relay machine 1').leaseFromRelay(relay.url);
        assert.equal(again.lease.lease_id, first.lease.lease_id);
        const renewed = await first.heartbeat();
        assert.equal(renewed.lease_id, first.lease.lease_id);
        await client('relay machine 2').leaseFromRelay(relay.url);
        await assert.rejects(
          client('relay machine 3').leaseFromRelay(relay.url),
          (err: unknown) => err instanceof LicenseServerError && err.code === 'ACTIVATION_LIMIT_REACHED',
        );
        assert.deepEqual(await first.release(), { released: 1 });
        await assert.rejects(first.heartbeat(), (err: unknown) => err instanceof LicenseServerError && err.code === 'NOT_ACTIVATED');
        const third = await client('relay machine 3').leaseFromRelay(relay.url);
        assert.equal(third.pool.pool_id, relay.pool_id);
      } finally {
        await relay.stop();
      }
    },
  );

  it('refuses a relay whose pool was signed by a key other than the vendor’s (SIGNATURE_INVALID)', { timeout: 120_000 }, async () => {
    const license = await createLicense(server, { limits: { max_installations: 5 } });
    const relay = await startRelay(server, license.license_key, { forged: true });
    try {
      await assert.rejects(
        client('relay machine 9').leaseFromRelay(relay.url),
        (err: unknown) => err instanceof VerificationError && err.code === 'SIGNATURE_INVALID',
      );
    } finally {
      await relay.stop();
    }
  });
});
