import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LicenseClient, LicenseServerError, NetworkError, VerificationError, type LicenseClientOptions } from '../src/index.js';
import { createLicense, fingerprintOf, serverPublicKey, startTestServer, type TestServer } from './server.js';
import { startPathProxy, startStandIn } from './standin.js';

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

  it('startTrial: the signed trial licence is kept like an activation, once per product and machine', async () => {
    await server.admin('POST', '/products', { code: 'NODE_TRIAL', name: 'Node trial product', key_prefix: 'NTR', trial: { days: 14 } });
    const { client } = clientFor('trial-1', { product: 'NODE_TRIAL', envelopes: true });
    const trial = await client.startTrial({ hostname: 'till-07', appVersion: '2.0.0' });
    assert.equal(trial.license.license_type, 'TRIAL');
    assert.equal(trial.license.product, 'NODE_TRIAL');
    assert.ok(trial.envelope, 'an envelope when asked for one');
    const offline = await client.check();
    assert.equal(offline.ok && offline.source, 'activation');
    assert.ok(offline.ok && offline.expiresAt, 'a trial expires');
    assert.equal((await client.validate()).valid, true);

    const { client: again } = clientFor('trial-1', { product: 'NODE_TRIAL' });
    await assert.rejects(again.startTrial(), (err: unknown) => err instanceof LicenseServerError && err.code === 'TRIAL_ALREADY_USED');
    assert.equal((await again.check()).ok, false);
    const { client: noTrials } = clientFor('trial-2');
    await assert.rejects(noTrials.startTrial(), (err: unknown) => err instanceof LicenseServerError && err.code === 'TRIALS_DISABLED');
    const { client: noProduct } = clientFor('trial-3', { product: undefined });
    await assert.rejects(noProduct.startTrial(), TypeError);
  });

  it('checkForUpdate: the newest release offered, verified like a validate answer; downloadUpdate checks the bytes', async () => {
    const bytes = Buffer.from(`node client update ${Date.now()}\n`.repeat(2000));
    const release = await server.admin<{ id: number }>('POST', '/products/POS_RETAIL/releases', {
      version: '7.1.0',
      notes: 'Faster start',
    });
    const put = await fetch(`${server.url}/api/v1/admin/releases/${release.id}/artifacts/app-7.1.0.tar.gz?platform=linux&arch=x64`, {
      method: 'PUT',
      headers: { 'x-api-key': server.apiKey, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    assert.equal(put.status, 201);
    await server.admin('POST', `/releases/${release.id}/publish`);

    const { license_key } = await createLicense(server);
    const { client } = clientFor('update-1', { envelopes: true });
    await assert.rejects(client.checkForUpdate({ currentVersion: '7.0.0' }), { code: 'NOT_ACTIVATED' });
    await client.activate(license_key);
    const answer = await client.checkForUpdate({ currentVersion: '7.0.0', platform: 'linux', arch: 'x64' });
    assert.equal(answer.update?.version, '7.1.0');
    assert.equal(answer.update?.notes, 'Faster start');
    const [artifact] = answer.update!.artifacts;
    assert.equal(artifact.size, bytes.length);
    const folder = mkdtempSync(join(tmpdir(), 'client-update-'));
    const saved = await client.downloadUpdate(artifact, join(folder, artifact.filename));
    assert.deepEqual(readFileSync(saved), bytes);
    await assert.rejects(client.downloadUpdate({ ...artifact, sha512: '0'.repeat(128) }, join(folder, 'tampered')), {
      reason: 'DIGEST_MISMATCH',
    });
    assert.equal(existsSync(join(folder, 'tampered')), false, 'nothing is left at the target');
    assert.equal((await client.checkForUpdate({ currentVersion: '7.1.0', platform: 'linux', arch: 'x64' })).update, null);
    assert.equal((await client.checkForUpdate({ currentVersion: '7.0.0', platform: 'darwin', arch: 'arm64' })).update, null);
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

  it('a floating seat is taken over after missed heartbeats; the silent machine learns it lost the seat', async () => {
    const { license_key } = await createLicense(server, { policy: { heartbeat_timeout_seconds: 10 } });
    const first = clientFor('float-1').client;
    const second = clientFor('float-2').client;
    await first.activate(license_key);
    const beat = await first.heartbeat();
    assert.equal(beat.heartbeat_timeout_seconds, 10);
    assert.equal((await first.check()).ok, true);
    await new Promise((r) => setTimeout(r, 11_000));
    const overdue = await first.check();
    assert.equal(!overdue.ok && overdue.reason, 'HEARTBEAT_OVERDUE', 'offline, the machine stops once the server would release the seat');
    await second.activate(license_key);
    let lost: LicenseServerError | undefined;
    const loop = first.startHeartbeat({ onSeatLost: (err) => (lost = err) });
    await loop.stopped;
    assert.equal(lost?.code, 'NOT_ACTIVATED');
    const seatLost = await first.check();
    assert.equal(!seatLost.ok && seatLost.reason, 'SEAT_LOST', 'the NOT_ACTIVATED answer is remembered');
    const secondLoop = second.startHeartbeat({ onBeat: () => secondLoop.stop() });
    await secondLoop.stopped;
  });

  it('the default refuses a stand-in server that signs with its own key (and publishes it)', async () => {
    const standIn = await startStandIn();
    try {
      const { client, statePath } = clientFor('stand-in-1', { serverUrl: standIn.url });
      await assert.rejects(client.activate('POS-AAAAA-BBBBB-CCCCC-DDDDD'), (err: unknown) => {
        assert.ok(err instanceof VerificationError);
        assert.equal(err.code, 'UNKNOWN_KEY');
        return true;
      });
      const checked = await client.check();
      assert.equal(!checked.ok && checked.reason, 'NO_LICENSE');
      const seat = JSON.stringify({ license_key: 'POS-AAAAA-BBBBB-CCCCC-DDDDD', machine_fingerprint: fingerprintOf('stand-in-1') });
      const file = (await (await fetch(`${standIn.url}/api/v1/license-file`, { method: 'POST', body: seat })).json()) as {
        license_file: string;
      };
      await assert.rejects(client.importLicenseFile(file.license_file), { code: 'UNKNOWN_KEY' });
      assert.equal((await client.check()).ok, false);
      // The default follows endorsed rotations: it read the published keys, and no chain led to the stand-in's key.
      assert.ok(standIn.requests.includes('GET /api/v1/public-keys'), 'it looked for an endorsement chain');
      assert.ok(!existsSync(statePath) || !readFileSync(statePath, 'utf8').includes(standIn.keyId), 'nothing of it is stored');

      // The documented cost of the opt-in: trust rests on whoever answers at serverUrl.
      const optIn = clientFor('stand-in-2', { serverUrl: standIn.url, fetchServerKeys: true }).client;
      await optIn.activate('POS-AAAAA-BBBBB-CCCCC-DDDDD');
      assert.equal((await optIn.check()).ok, true);
    } finally {
      await standIn.close();
    }
  });

  it('keeps the path of serverUrl (a server mounted under /licensing)', async () => {
    const proxy = await startPathProxy(server.url, '/licensing');
    try {
      for (const [seed, serverUrl] of [
        ['path-1', proxy.url],
        ['path-2', proxy.url.replace(/\/$/, '')],
      ]) {
        const { license_key } = await createLicense(server);
        const { client } = clientFor(seed, { serverUrl, fetchServerKeys: true });
        await client.activate(license_key);
        assert.equal((await client.validate()).valid, true);
      }
      assert.ok(proxy.requests.length >= 4);
      assert.ok(
        proxy.requests.every((path) => path.startsWith('/licensing/api/v1/')),
        proxy.requests.join(' '),
      );
    } finally {
      await proxy.close();
    }
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
  it('with fetchServerKeys: follows a key rotation, and keeps verifying offline after it', async () => {
    const { license_key } = await createLicense(server);
    const { client } = clientFor('rotate-1', { fetchServerKeys: true });
    await client.activate(license_key);
    const rotated = await server.admin<{ key_id: string }>('POST', '/signing-keys/rotate');
    assert.notEqual(rotated.key_id, pinned.key_id);
    const deadline = Date.now() + 10_000;
    let answer = await client.validate();
    while (answer.key_id !== rotated.key_id && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      answer = await client.validate();
    }
    assert.equal(answer.key_id, rotated.key_id, 'the answer is signed by the new key, fetched from /public-keys');
    const again = await client.activate(license_key);
    assert.equal(again.license.key_id, rotated.key_id);
    assert.equal((await client.check()).ok, true);

    // Pinned to the shipped keys: a key the server hands out is not enough.
    const pinnedOnly = clientFor('rotate-1', { pinToShippedKeys: true }).client;
    await assert.rejects(pinnedOnly.activate(license_key), { reason: 'UNKNOWN_KEY', code: 'UNKNOWN_KEY' });
  });

  it('with fetchServerKeys: a revoked key is dropped at the next refresh, pinned or fetched; pinned-only keeps its keys', async () => {
    const active = await serverPublicKey(server);
    const { license_key } = await createLicense(server);
    const pinnedActive = clientFor('revoke-key-1', { fetchServerKeys: true, publicKeys: [active] }).client;
    const fetchedOnly = clientFor('revoke-key-1', { fetchServerKeys: true }).client;
    const pinnedOnly = clientFor('revoke-key-1', { publicKeys: [active], pinToShippedKeys: true }).client;
    for (const client of [pinnedActive, fetchedOnly, pinnedOnly]) {
      const signed = await client.activate(license_key);
      assert.equal(signed.license.key_id, active.key_id);
    }
    await server.admin('POST', '/signing-keys/rotate');
    await server.admin('POST', `/signing-keys/${active.key_id}/revoke`, { reason: 'found in a leaked backup' });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const { keys } = (await (await fetch(`${server.url}/api/v1/public-keys`)).json()) as { keys: { key_id: string }[] };
      if (!keys.some((k) => k.key_id === active.key_id)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const client of [pinnedActive, fetchedOnly]) {
      assert.equal((await client.check()).ok, true, 'trusted until the next refresh');
      assert.ok(!(await client.refreshKeys()).includes(active.key_id));
      const refused = await client.check();
      assert.equal(!refused.ok && refused.reason, 'KEY_REVOKED');
    }
    // docs/signing.md, After a leak: a client that only uses pinned keys trusts them until an application update.
    assert.equal((await pinnedOnly.check()).ok, true);
    await assert.rejects(pinnedOnly.refreshKeys(), TypeError);
  });
});
