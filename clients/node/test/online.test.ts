import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LicenseClient, LicenseServerError, NetworkError, type LicenseClientOptions } from '../src/index.js';
import { createLicense, fingerprintOf, serverPublicKey, startTestServer, type TestServer } from './server.js';

const DAY = 86_400_000;
let server: TestServer;
let pinned: { key_id: string; public_key_pem: string };

before(async () => {
  server = await startTestServer();
  pinned = await serverPublicKey(server);
});
after(async () => server?.remove());

function clientFor(seed: string, extra: Partial<LicenseClientOptions> = {}) {
  const statePath = join(mkdtempSync(join(tmpdir(), 'client-online-')), 'licence-state.json');
  const client = new LicenseClient({
    serverUrl: server.url,
    statePath,
    appSalt: 'online-test',
    publicKeys: [pinned],
    fingerprint: fingerprintOf(seed),
    product: 'POS_RETAIL',
    retries: 1,
    timeoutMs: 5000,
    ...extra,
  });
  return { client, statePath };
}

describe('against a real server', () => {
  it('activates, validates with a signed nonce answer, checks offline and deactivates', async () => {
    const { license_key } = await createLicense(server);
    const { client } = clientFor('activate-1');
    const signed = await client.activate(license_key, { hostname: 'till-01', appVersion: '1.0.0' });
    assert.equal(signed.license.license_key, license_key);
    assert.equal(signed.license.key_id, pinned.key_id);
    assert.ok(signed.license.signed_at, 'the payload carries signed_at');

    const answer = await client.validate();
    assert.equal(answer.valid, true);
    assert.equal(answer.code, null);
    assert.equal(answer.key_id, pinned.key_id);

    const offline = await client.check();
    assert.equal(offline.ok && offline.source, 'activation');
    assert.equal(offline.ok && offline.status, 'active');

    const result = await client.deactivate();
    assert.equal(result.can_reactivate, true);
    const after = await client.check();
    assert.equal(!after.ok && after.reason, 'NO_LICENSE');
  });

  it('server error codes arrive as typed errors', async () => {
    const { client } = clientFor('errors-1');
    await assert.rejects(client.activate('POS-AAAAA-AAAAA-AAAAA-AAAAA'), (err: unknown) => {
      assert.ok(err instanceof LicenseServerError);
      assert.equal(err.code, 'INVALID_KEY');
      assert.equal(err.status, 400);
      return true;
    });
    const { license_key } = await createLicense(server);
    await clientFor('errors-2').client.activate(license_key);
    await assert.rejects(clientFor('errors-3').client.activate(license_key), { code: 'ALREADY_ACTIVATED' });
  });

  it('a revocation seen online makes the offline check refuse', async () => {
    const { id, license_key } = await createLicense(server);
    const { client } = clientFor('revoke-1');
    await client.activate(license_key);
    await server.admin('POST', `/licenses/${id}/revoke`, { reason: 'chargeback' });
    const answer = await client.validate();
    assert.equal(answer.valid, false);
    assert.equal(answer.code, 'KEY_REVOKED');
    const offline = await client.check();
    assert.equal(!offline.ok && offline.reason, 'INVALIDATED');
  });

  it('licence files: fetched online, checked with the server stopped, TTL from the policy', async () => {
    const { license_key } = await createLicense(server, { policy: { license_file_ttl_days: 7 } });
    const { client } = clientFor('file-1');
    await client.activate(license_key);
    const file = await client.licenseFile();
    assert.match(file.license_file, /^-----BEGIN LICENSE FILE-----\n/);
    const ttl = Date.parse(file.file_expires_at) - Date.now();
    assert.ok(ttl > 6.9 * DAY && ttl <= 7 * DAY, `TTL ${ttl / DAY} days`);
    const checked = await client.check();
    assert.equal(checked.ok && checked.source, 'license_file');
  });

  it('an air-gapped activation: request text → admin → licence file imported on the machine', async () => {
    const { license_key } = await createLicense(server);
    const { client } = clientFor('airgap-1');
    const request = await client.createActivationRequest(license_key, { hostname: 'plant-floor-3' });
    const answer = await server.admin<{ license_file: string }>('POST', '/offline-activations', { request });
    const result = await client.importLicenseFile(answer.license_file);
    assert.equal(result.ok, true);
    assert.equal(result.ok && result.license.machine_fingerprint, fingerprintOf('airgap-1'));
  });

  it('follows a key rotation through the JWKS, and keeps verifying offline after it', async () => {
    const { license_key } = await createLicense(server);
    const { client } = clientFor('rotate-1');
    await client.activate(license_key);
    const rotated = await server.admin<{ key_id: string }>('POST', '/signing-keys/rotate');
    assert.notEqual(rotated.key_id, pinned.key_id);
    const deadline = Date.now() + 10_000;
    let answer = await client.validate();
    while (answer.key_id !== rotated.key_id && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      answer = await client.validate();
    }
    assert.equal(answer.key_id, rotated.key_id, 'the answer is signed by the new key, fetched from the JWKS');
    const again = await client.activate(license_key);
    assert.equal(again.license.key_id, rotated.key_id);
    assert.equal((await client.check()).ok, true);

    const pinnedOnly = clientFor('rotate-1', { trustServerKeys: false }).client;
    await assert.rejects(pinnedOnly.activate(license_key), { reason: 'UNKNOWN_KEY' });
  });

  it('a floating seat is taken over after missed heartbeats; the silent machine learns it lost the seat', async () => {
    const { license_key } = await createLicense(server, { policy: { heartbeat_timeout_seconds: 10 } });
    const first = clientFor('float-1').client;
    const second = clientFor('float-2').client;
    await first.activate(license_key);
    const beat = await first.heartbeat();
    assert.equal(beat.heartbeat_timeout_seconds, 10);
    await new Promise((r) => setTimeout(r, 11_000));
    await second.activate(license_key);
    let lost: LicenseServerError | undefined;
    const loop = first.startHeartbeat({ onSeatLost: (err) => (lost = err) });
    await loop.stopped;
    assert.equal(lost?.code, 'NOT_ACTIVATED');
    const secondLoop = second.startHeartbeat({ onBeat: () => secondLoop.stop() });
    await secondLoop.stopped;
  });

  it('an outage: offline check keeps working, online calls fail with NetworkError, and recover', async () => {
    const { license_key } = await createLicense(server);
    const { client, statePath } = clientFor('outage-1');
    await client.activate(license_key);
    await server.stop();
    try {
      await assert.rejects(client.validate(), (err: unknown) => err instanceof NetworkError);
      assert.equal((await client.check()).ok, true);
    } finally {
      await server.start();
    }
    assert.equal((await client.validate()).valid, true);

    const stored = JSON.parse(readFileSync(statePath, 'utf8')) as { state: { activation: { license: { expires_at: string } } } };
    stored.state.activation.license.expires_at = '2099-01-01T00:00:00.000Z';
    writeFileSync(statePath, JSON.stringify(stored));
    const tampered = await client.check();
    assert.equal(!tampered.ok && tampered.reason, 'STATE_TAMPERED');
  });
});
