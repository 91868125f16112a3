import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  armor,
  canonicalBytes,
  dearmor,
  keyIdOf,
  defaultFingerprint,
  LicenseClient,
  LICENSE_FILE_LABEL,
  verifySignature,
  type LicensePayload,
} from '../src/index.js';

const DAY = 86_400_000;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
const fingerprint = 'sha256:' + 'ab'.repeat(32);
const T0 = Date.parse('2026-03-01T12:00:00.000Z');

const keyId = (key: KeyObject) => keyIdOf(key);

function payload(overrides: Partial<LicensePayload> = {}, signer: KeyObject = publicKey): LicensePayload {
  return {
    license_key: 'POS-AAAAA-BBBBB-CCCCC-DDDDD',
    product: 'POS_RETAIL',
    license_type: 'YEARLY',
    issued_at: new Date(T0 - DAY).toISOString(),
    expires_at: new Date(T0 + 365 * DAY).toISOString(),
    activated_at: new Date(T0).toISOString(),
    signed_at: new Date(T0).toISOString(),
    machine_fingerprint: fingerprint,
    grace_days: 7,
    limits: { max_installations: 1 },
    features: ['reports'],
    customer: { name: 'Müller ❤️', email: null },
    policy: { heartbeat_timeout_seconds: null, max_deactivations_per_30_days: null, license_file_ttl_days: 30 },
    key_id: keyId(signer),
    ...overrides,
  };
}

function licenseFile(license: LicensePayload, key: KeyObject = privateKey): string {
  return armor(LICENSE_FILE_LABEL, { license, signature: 'RSA-SHA256:' + sign('sha256', canonicalBytes(license), key).toString('base64') });
}

function client(now: number, extra: Partial<ConstructorParameters<typeof LicenseClient>[0]> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'client-offline-'));
  let clock = now;
  const c = new LicenseClient({
    serverUrl: 'http://127.0.0.1:9', // nothing listens: these tests never go online
    statePath: join(dir, 'state.json'),
    appSalt: 'offline-test-salt',
    publicKeys: [{ public_key_pem: pem(publicKey) }],
    fingerprint,
    product: 'POS_RETAIL',
    now: () => new Date(clock),
    ...extra,
  });
  return { client: c, statePath: join(dir, 'state.json'), setNow: (ms: number) => (clock = ms) };
}

const fileFor = (issued: number, ttlDays = 30, overrides: Partial<LicensePayload> = {}) =>
  licenseFile(
    payload({
      signed_at: new Date(issued).toISOString(),
      file_issued_at: new Date(issued).toISOString(),
      file_expires_at: new Date(issued + ttlDays * DAY).toISOString(),
      ...overrides,
    }),
  );

describe('offline check', () => {
  it('with nothing stored: NO_LICENSE', async () => {
    const { client: c } = client(T0);
    assert.deepEqual(await c.check(), { ok: false, reason: 'NO_LICENSE', message: 'no licence is stored on this machine' });
  });

  it('a licence file verifies, then expires with its TTL', async () => {
    const { client: c, setNow } = client(T0);
    const imported = await c.importLicenseFile(fileFor(T0));
    assert.equal(imported.ok, true);
    assert.equal(imported.ok && imported.source, 'license_file');
    setNow(T0 + 29 * DAY);
    assert.equal((await c.check()).ok, true);
    setNow(T0 + 30 * DAY + 1000);
    const expired = await c.check();
    assert.equal(!expired.ok && expired.reason, 'FILE_EXPIRED');
  });

  it('status follows expires_at + grace_days', async () => {
    const { client: c, setNow } = client(T0);
    await c.importLicenseFile(fileFor(T0, 365, { expires_at: new Date(T0 + 10 * DAY).toISOString(), grace_days: 3 }));
    setNow(T0 + 9 * DAY);
    assert.equal((await c.check()).ok && 'active', 'active');
    setNow(T0 + 11 * DAY);
    const grace = await c.check();
    assert.equal(grace.ok && grace.status, 'grace');
    assert.equal(grace.ok && grace.graceEndsAt?.toISOString(), new Date(T0 + 13 * DAY).toISOString());
    setNow(T0 + 13 * DAY + 1);
    const expired = await c.check();
    assert.equal(!expired.ok && expired.reason, 'EXPIRED');
  });

  it('a clock set back before the latest signed time is CLOCK_TAMPERED (with a tolerance)', async () => {
    const { client: c, setNow } = client(T0 + 5 * DAY, { clockToleranceSeconds: 300 });
    await c.importLicenseFile(fileFor(T0 + 5 * DAY));
    setNow(T0 + 5 * DAY - 200_000);
    assert.equal((await c.check()).ok, true, 'within the tolerance');
    setNow(T0 + 2 * DAY);
    const tampered = await c.check();
    assert.equal(!tampered.ok && tampered.reason, 'CLOCK_TAMPERED');
  });

  it('refuses a file for another machine, another product, an unknown key or a changed byte', async () => {
    const { client: c } = client(T0);
    await assert.rejects(c.importLicenseFile(fileFor(T0, 30, { machine_fingerprint: 'sha256:' + 'cd'.repeat(32) })), {
      reason: 'FINGERPRINT_MISMATCH',
    });
    const foreign = licenseFile(payload({ key_id: keyId(other.publicKey) }, other.publicKey), other.privateKey);
    await assert.rejects(c.importLicenseFile(foreign), { reason: 'UNKNOWN_KEY' });
    const document = dearmor(LICENSE_FILE_LABEL, fileFor(T0)) as { license: LicensePayload; signature: string };
    document.license.customer.name = 'Muller';
    await assert.rejects(c.importLicenseFile(armor(LICENSE_FILE_LABEL, document)), { reason: 'INVALID_SIGNATURE' });
    await assert.rejects(c.importLicenseFile('-----BEGIN LICENSE FILE-----\n!!!\n-----END LICENSE FILE-----'), {
      reason: 'MALFORMED_ENVELOPE',
    });

    const { client: forErp } = client(T0, { product: 'ERP_SUITE' });
    const wrongProduct = await forErp.importLicenseFile(fileFor(T0));
    assert.equal(!wrongProduct.ok && wrongProduct.reason, 'PRODUCT_MISMATCH');
  });

  it('an edited state file is STATE_TAMPERED; a truncated one is STATE_CORRUPT; both recover on the next import', async () => {
    const { client: c, statePath } = client(T0);
    await c.importLicenseFile(fileFor(T0));
    const text = readFileSync(statePath, 'utf8');
    const state = JSON.parse(text) as { state: { latest_signed_at: string } };
    state.state.latest_signed_at = new Date(T0 - 100 * DAY).toISOString();
    writeFileSync(statePath, JSON.stringify(state));
    const tampered = await c.check();
    assert.equal(!tampered.ok && tampered.reason, 'STATE_TAMPERED');

    writeFileSync(statePath, text.slice(0, text.length / 2));
    const corrupt = await c.check();
    assert.equal(!corrupt.ok && corrupt.reason, 'STATE_CORRUPT');
    assert.equal((await c.importLicenseFile(fileFor(T0))).ok, true);
  });

  it('maxOfflineDays refuses when the latest signed time is too old', async () => {
    const { client: c, setNow } = client(T0, { maxOfflineDays: 7 });
    await c.importLicenseFile(fileFor(T0));
    setNow(T0 + 6 * DAY);
    assert.equal((await c.check()).ok, true);
    setNow(T0 + 8 * DAY);
    const result = await c.check();
    assert.equal(!result.ok && result.reason, 'OFFLINE_TOO_LONG');
  });

  it('a floating licence (heartbeat timeout) is HEARTBEAT_OVERDUE offline once the last heartbeat is older than the timeout', async () => {
    const policy = { heartbeat_timeout_seconds: 600, max_deactivations_per_30_days: null, license_file_ttl_days: 30 };
    let answer: () => Response = () =>
      Response.json({ valid: true, status: 'active', code: null, heartbeat_timeout_seconds: 600, next_heartbeat_before: null });
    const { client: c, setNow } = client(T0, { fetch: async () => answer() });
    await c.importLicenseFile(fileFor(T0, 30, { policy, activated_at: new Date(T0).toISOString() }));
    setNow(T0 + 599_000);
    assert.equal((await c.check()).ok, true);
    setNow(T0 + 601_000);
    const overdue = await c.check();
    assert.equal(!overdue.ok && overdue.reason, 'HEARTBEAT_OVERDUE');

    assert.equal((await c.heartbeat()).valid, true);
    assert.equal((await c.check()).ok, true, 'a successful heartbeat is stored');
    setNow(T0 + 1_202_000);
    assert.equal((await c.check()).ok, false);

    // The server released the seat meanwhile: its NOT_ACTIVATED answer is stored too.
    setNow(T0 + 1_300_000);
    answer = () => Response.json({ error: { code: 'NOT_ACTIVATED', message: 'released', details: {} } }, { status: 400 });
    await assert.rejects(c.heartbeat(), { code: 'NOT_ACTIVATED' });
    const lost = await c.check();
    assert.equal(!lost.ok && lost.reason, 'SEAT_LOST');
  });

  it('a licence without a heartbeat timeout never needs a heartbeat offline', async () => {
    const { client: c, setNow } = client(T0);
    await c.importLicenseFile(fileFor(T0));
    setNow(T0 + 20 * DAY);
    assert.equal((await c.check()).ok, true);
  });

  it('the constructor requires pinned keys unless fetchServerKeys is set, and refuses the old trustServerKeys', () => {
    assert.throws(() => client(T0, { publicKeys: [] }), /publicKeys or jwks is required/);
    assert.throws(() => client(T0, { publicKeys: undefined }), TypeError);
    assert.doesNotThrow(() => client(T0, { publicKeys: undefined, fetchServerKeys: true }));
    assert.throws(() => client(T0, { trustServerKeys: true } as never), /replaced by fetchServerKeys/);
  });

  it('the built-in JCS gives the canonical bytes of every test vector, and the signatures verify', () => {
    const file = fileURLToPath(new URL('../../../../docs/test-vectors/vectors.json', import.meta.url));
    const vectors = JSON.parse(readFileSync(file, 'utf8')) as {
      public_key_pem: string;
      vectors: { name: string; payload_json: string; canonical_hex: string; signature: string }[];
    };
    const key = createPublicKey(vectors.public_key_pem);
    assert.ok(vectors.vectors.length >= 9);
    for (const vector of vectors.vectors) {
      const payload = JSON.parse(vector.payload_json) as unknown;
      assert.equal(canonicalBytes(payload).toString('hex'), vector.canonical_hex, vector.name);
      assert.equal(verifySignature(payload, vector.signature, key), true, vector.name);
    }
    assert.throws(() => canonicalBytes({ text: 'lone \ud800' }), /lone surrogate/);
    assert.throws(() => canonicalBytes({ n: Number.NaN }), TypeError);
    assert.equal(
      canonicalBytes({ b: [1, undefined, 'x'], a: undefined, '\u20ac': 1, '\ud83d\ude00': 2 }).toString(),
      '{"b":[1,null,"x"],"€":1,"😀":2}',
    );
  });

  it('the default fingerprint is sha256 of the machine id and the salt', () => {
    const a = defaultFingerprint('salt-a', 'machine-1');
    assert.match(a, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(a, defaultFingerprint('salt-b', 'machine-1'));
    assert.equal(a, defaultFingerprint('salt-a', 'machine-1'));
    assert.match(defaultFingerprint('salt-a'), /^sha256:[0-9a-f]{64}$/);
  });

  it('an activation request is the armored /activate body', async () => {
    const { client: c } = client(T0);
    const request = await c.createActivationRequest('pos-aaaaa-bbbbb-ccccc-ddddd', { hostname: 'till-07', appVersion: '4.2.0' });
    assert.match(request, /^-----BEGIN ACTIVATION REQUEST-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END ACTIVATION REQUEST-----\n$/);
    const body = dearmor('ACTIVATION REQUEST', request) as Record<string, string>;
    assert.equal(body.machine_fingerprint, fingerprint);
    assert.equal(body.hostname, 'till-07');
    assert.equal(body.app_version, '4.2.0');
    assert.equal(body.product, 'POS_RETAIL');
  });
});
