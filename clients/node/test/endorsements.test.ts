import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dearmor, endorsementMessage, LicenseClient, LICENSE_FILE_LABEL, type LicenseClientOptions } from '../src/index.js';
import { createLicense, fingerprintOf, serverPublicKey, startTestServer, type TestServer } from './server.js';
import { startStandIn } from './standin.js';

let server: TestServer;
let first: { key_id: string; public_key_pem: string };
const root = generateKeyPairSync('ed25519');
const rootPem = root.publicKey.export({ type: 'spki', format: 'pem' }).toString();

before(async () => {
  server = await startTestServer();
  first = await serverPublicKey(server);
});
after(async () => server?.remove());

/** A client that shipped only the server's first key. */
function clientFor(seed: string, extra: Partial<LicenseClientOptions> = {}) {
  return new LicenseClient({
    serverUrl: server.url,
    statePath: join(mkdtempSync(join(tmpdir(), 'client-endorse-')), 'licence-state.json'),
    appSalt: 'endorsement-test',
    publicKeys: [first],
    fingerprint: fingerprintOf(seed),
    product: 'POS_RETAIL',
    retries: 1,
    timeoutMs: 5000,
    followEndorsements: true,
    envelopes: true,
    ...extra,
  });
}

const rootEndorsement = (publicKeyPem: string) => ({
  public_key_pem: rootPem,
  signature: sign(null, endorsementMessage(createPublicKey(publicKeyPem)), root.privateKey).toString('base64url'),
});

describe('endorsed rotation (docs/signing.md, Endorsed rotation)', () => {
  it('a client that shipped only the first key follows RSA -> Ed25519 -> RSA without an update, with envelopes and v2 files', async () => {
    const { license_key } = await createLicense(server, { limits: { max_installations: 3 } });
    const client = clientFor('chain-1');
    // Default options: only the first key shipped, nothing else set. Endorsed rotations are followed by default.
    const plain = new LicenseClient({
      serverUrl: server.url,
      statePath: join(mkdtempSync(join(tmpdir(), 'client-endorse-')), 'licence-state.json'),
      appSalt: 'endorsement-test',
      publicKeys: [first],
    });
    await plain.activate(license_key);
    const activated = await client.activate(license_key);
    assert.equal(activated.envelope?.alg, 'RS256');
    assert.equal(activated.license.key_id, first.key_id);

    const ed = await server.admin<{ key_id: string; algorithm: string }>('POST', '/signing-keys/rotate', { algorithm: 'Ed25519' });
    assert.equal(ed.algorithm, 'Ed25519');
    const again = await client.activate(license_key);
    assert.equal(again.license.key_id, ed.key_id);
    assert.equal(again.envelope?.alg, 'EdDSA');
    assert.match(again.signature, /^Ed25519:/);
    const answer = await client.validate();
    assert.equal(answer.valid, true);
    assert.equal(answer.key_id, ed.key_id);

    const rsa = await server.admin<{ key_id: string; algorithm: string }>('POST', '/signing-keys/rotate');
    assert.equal(rsa.algorithm, 'RSA-SHA256');
    const third = await client.activate(license_key);
    assert.equal(third.license.key_id, rsa.key_id);
    const file = await client.licenseFile();
    const document = dearmor(LICENSE_FILE_LABEL, file.license_file) as { envelope?: { key_id: string } };
    assert.equal(document.envelope?.key_id, rsa.key_id, 'a version 2 file');
    const offline = await client.check();
    assert.equal(offline.ok && offline.source, 'license_file');

    // The default client follows too, RSA -> Ed25519 -> RSA: its validate answer is signed by the third key.
    const followed = await plain.validate();
    assert.equal(followed.valid, true);
    assert.equal(followed.key_id, rsa.key_id);
    assert.equal((await plain.check()).ok, true);

    // Pinned to the shipped key (pinToShippedKeys, or followEndorsements: false): refused, as a pinned client should be.
    await assert.rejects(clientFor('chain-1', { pinToShippedKeys: true }).activate(license_key), { code: 'UNKNOWN_KEY' });
    await assert.rejects(clientFor('chain-1', { followEndorsements: false }).activate(license_key), { code: 'UNKNOWN_KEY' });
  });

  it("refuses a stand-in server's own key: it is endorsed by nothing the client trusts", async () => {
    const standIn = await startStandIn();
    try {
      const client = clientFor('stand-in', { serverUrl: standIn.url, envelopes: false });
      await assert.rejects(client.activate('ANY-KEY'), { code: 'UNKNOWN_KEY' });
      assert.ok(standIn.requests.includes('GET /api/v1/public-keys'), 'it looked for an endorsement chain');
    } finally {
      await standIn.close();
    }
  });

  it('drops a revoked key, shipped or not; an offline root endorsement keeps the chain alive past it', async () => {
    const keys = (await (await fetch(`${server.url}/api/v1/public-keys`)).json()) as {
      keys: { key_id: string; algorithm: string; status: string; public_key_pem: string }[];
    };
    const active = keys.keys[0];
    const ed = keys.keys.find((k) => k.algorithm === 'Ed25519')!;
    await server.admin('POST', `/signing-keys/${active.key_id}/endorsements`, rootEndorsement(active.public_key_pem));
    await server.admin('POST', `/signing-keys/${ed.key_id}/revoke`, {});

    const { license_key } = await createLicense(server, { limits: { max_installations: 3 } });
    // The only chain to the active key ran through the revoked Ed25519 key.
    await assert.rejects(clientFor('revoked-chain').activate(license_key), { code: 'UNKNOWN_KEY' });
    const withRoot = clientFor('root-chain', { rootKeys: [{ public_key_pem: rootPem }] });
    const signed = await withRoot.activate(license_key);
    assert.equal(signed.license.key_id, active.key_id);
    // The first key: shipped, but revoked on the server: dropped.
    await server.admin('POST', `/signing-keys/${first.key_id}/revoke`, {});
    await withRoot.refreshEndorsedKeys();
    const offline = await withRoot.check();
    assert.equal(offline.ok, true, 'the active key is still endorsed by the root');
  });
});
