import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, JSONWebKeySet, jwtVerify, SignJWT } from 'jose';
import { endorsementBody } from '../src/cli/endorse-key';
import { decodeLicenseFile } from '../src/activation/license-file';
import { signEndorsement, verifyEndorsement, verifyEnvelope } from '../src/signing/envelope';
import { pemOfJwk } from '../src/signing/jwk';
import { canonicalBytes, keyIdOf, verifySignedAnswer, verifySignedLicense } from '../src/signing/license-signature';
import { fieldsOf } from './support/api-errors';
import { activationRequest, createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { ENV_SIGNING_KEY } from './support/test-database';

// Start-up of the app and RSA key generation (rotations) take seconds on a busy machine.
jest.setTimeout(30_000);

const KEYS = '/api/v1/admin/signing-keys';

interface Envelope {
  payload: string;
  alg: string;
  key_id: string;
  signature: string;
}
interface PublishedKey {
  key_id: string;
  algorithm: string;
  status: string;
  public_key_pem: string;
  endorsements: { key_id: string; signature: string }[];
}

/** docs/signing.md, Envelopes, Ed25519 keys and Endorsed rotation: through the real app. */
describe('signed envelopes, Ed25519 keys and endorsed rotation', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await createTestApp();
    dir = mkdtempSync(join(tmpdir(), 'envelopes-'));
  }, 60_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  const publishedKeys = async () => ((await t.http().get('/api/v1/public-keys').expect(200)).body as { keys: PublishedKey[] }).keys;
  const keyLookup = async () => {
    const keys = await publishedKeys();
    return (id: string) => {
      const k = keys.find((key) => key.key_id === id);
      return k ? { key: createPublicKey(k.public_key_pem), revoked: k.status === 'revoked' } : undefined;
    };
  };
  const activated = async (seed: string, extra: Record<string, unknown> = { envelope: true }) => {
    const license = await createLicense(t);
    const fp = fingerprint(seed);
    const res = await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: license.license_key, machine_fingerprint: fp, hostname: 'till', ...extra })
      .expect(200);
    return {
      licenseKey: license.license_key,
      fp,
      body: res.body as { license: Record<string, unknown>; signature: string; envelope: Envelope },
    };
  };
  const decoded = (e: Envelope) => Buffer.from(e.payload, 'base64url');

  describe('envelopes beside the legacy fields (RSA key)', () => {
    it('/activate with envelope: true: the payload is the exact signed bytes, the signature the legacy one; openssl verifies it from the raw bytes', async () => {
      const { body } = await activated('env-activate');
      expect(Object.keys(body).sort()).toEqual(['envelope', 'license', 'signature']);
      expect(Object.keys(body.envelope).sort()).toEqual(['alg', 'key_id', 'payload', 'signature']);
      expect(body.envelope).toMatchObject({ alg: 'RS256', key_id: body.license.key_id });
      expect(body.envelope.payload).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decoded(body.envelope).equals(canonicalBytes(body.license))).toBe(true);
      expect(Buffer.from(body.envelope.signature, 'base64url').toString('base64')).toBe(body.signature.replace('RSA-SHA256:', ''));
      const verdict = verifyEnvelope(body.envelope, await keyLookup());
      expect(verdict).toMatchObject({ ok: true, value: body.license });

      const pem = (await publishedKeys()).find((k) => k.key_id === body.envelope.key_id)!.public_key_pem;
      writeFileSync(join(dir, 'key.pem'), pem);
      writeFileSync(join(dir, 'payload.bin'), decoded(body.envelope));
      writeFileSync(join(dir, 'payload.sig'), Buffer.from(body.envelope.signature, 'base64url'));
      const out = execFileSync('openssl', [
        'dgst',
        '-sha256',
        '-verify',
        join(dir, 'key.pem'),
        '-signature',
        join(dir, 'payload.sig'),
        join(dir, 'payload.bin'),
      ]);
      expect(out.toString()).toContain('Verified OK');
    });

    it('without envelope (or envelope: false) the answer is exactly as before', async () => {
      expect(Object.keys((await activated('env-none', {})).body).sort()).toEqual(['license', 'signature']);
      expect(Object.keys((await activated('env-false', { envelope: false })).body).sort()).toEqual(['license', 'signature']);
    });

    it('envelope must be a boolean: 400 VALIDATION_ERROR naming it, on every route that takes it', async () => {
      const license = await createLicense(t);
      const seat = { license_key: license.license_key, machine_fingerprint: fingerprint('env-bad') };
      for (const [url, body] of [
        ['/api/v1/activate', { ...seat, hostname: 'h' }],
        ['/api/v1/validate', { ...seat, nonce: randomBytes(18).toString('base64url') }],
        ['/api/v1/license-file', seat],
      ] as const) {
        for (const envelope of ['true', 1, null]) {
          const res = await t
            .http()
            .post(url)
            .send({ ...body, envelope })
            .expect(400);
          expect([url, res.body.error.code, fieldsOf(res.body)]).toEqual([url, 'VALIDATION_ERROR', ['envelope']]);
        }
      }
    });

    it('/validate with a nonce and envelope: true: the envelope covers the answer without signature and envelope; the legacy signature still verifies', async () => {
      const { licenseKey, fp } = await activated('env-validate', {});
      const nonce = randomBytes(18).toString('base64url');
      const answer = (
        await t
          .http()
          .post('/api/v1/validate')
          .send({ license_key: licenseKey, machine_fingerprint: fp, nonce, envelope: true })
          .expect(200)
      ).body as Record<string, unknown> & { envelope: Envelope; signature: string };
      const { signature: _s, envelope, ...signed } = answer;
      expect(decoded(envelope).equals(canonicalBytes(signed))).toBe(true);
      expect(verifyEnvelope(envelope, await keyLookup())).toMatchObject({ ok: true, value: signed });
      const pem = (await publishedKeys())[0].public_key_pem;
      expect(verifySignedAnswer(answer, pem, nonce)).toEqual({ valid: true });
      // Without a nonce nothing is signed, envelope or not.
      const plain = await t
        .http()
        .post('/api/v1/validate')
        .send({ license_key: licenseKey, machine_fingerprint: fp, envelope: true })
        .expect(200);
      expect(plain.body.envelope).toBeUndefined();
      expect(plain.body.signature).toBeUndefined();
    });

    it('/license-file with envelope: true is a version 2 file: its envelope decodes to its license, and the answer carries the same envelope', async () => {
      const { licenseKey, fp } = await activated('env-file', {});
      const res = await t
        .http()
        .post('/api/v1/license-file')
        .send({ license_key: licenseKey, machine_fingerprint: fp, envelope: true })
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['envelope', 'file_expires_at', 'license_file']);
      const file = decodeLicenseFile(res.body.license_file)!;
      expect(Object.keys(file).sort()).toEqual(['envelope', 'license', 'signature']);
      expect(file.envelope).toEqual(res.body.envelope);
      const verdict = verifyEnvelope(file.envelope, await keyLookup());
      expect(verdict).toMatchObject({ ok: true, value: file.license });
      expect(verifySignedLicense(file, (await publishedKeys())[0].public_key_pem)).toEqual({ valid: true });
    });
  });

  it('an air-gapped activation request that says envelope: true is answered with a version 2 file', async () => {
    const license = await createLicense(t);
    const body = { license_key: license.license_key, machine_fingerprint: fingerprint('env-offline'), hostname: 'air', envelope: true };
    const res = await t.admin
      .post('/api/v1/admin/offline-activations')
      .send({ request: activationRequest(body) })
      .expect(200);
    const file = decodeLicenseFile(res.body.license_file)!;
    expect(verifyEnvelope(file.envelope, await keyLookup())).toMatchObject({ ok: true, value: file.license });
    const plain = await t.admin
      .post('/api/v1/admin/offline-activations')
      .send({ request: activationRequest({ ...body, envelope: undefined }) })
      .expect(200);
    expect(Object.keys(decodeLicenseFile(plain.body.license_file)!).sort()).toEqual(['license', 'signature']);
  });

  describe('Ed25519 keys and endorsements', () => {
    let firstKeyId: string;
    let edKeyId: string;
    let jwksBeforeRevocation: JSONWebKeySet;

    it('rotate {algorithm: "Ed25519"}: 201, published with algorithm Ed25519, endorsed by the outgoing key; the JWK is OKP/Ed25519/EdDSA', async () => {
      firstKeyId = (await publishedKeys())[0].key_id;
      const res = await t.admin.post(`${KEYS}/rotate`).send({ algorithm: 'Ed25519' }).expect(201);
      jwksBeforeRevocation = (await t.http().get('/.well-known/jwks.json').expect(200)).body as JSONWebKeySet;
      edKeyId = res.body.key_id;
      expect(res.body).toMatchObject({
        algorithm: 'Ed25519',
        status: 'active',
        endorsements: [{ key_id: firstKeyId, signature: expect.any(String) }],
      });
      expect((await t.http().get('/api/v1/public-key').expect(200)).body).toMatchObject({ algorithm: 'Ed25519', key_id: edKeyId });
      const keys = await publishedKeys();
      const ed = keys.find((k) => k.key_id === edKeyId)!;
      const first = keys.find((k) => k.key_id === firstKeyId)!;
      expect(ed.algorithm).toBe('Ed25519');
      expect(keyIdOf(ed.public_key_pem)).toBe(edKeyId);
      expect(
        verifyEndorsement(createPublicKey(ed.public_key_pem), ed.endorsements[0].signature, createPublicKey(first.public_key_pem)),
      ).toBe(true);
      const jwks = (await t.http().get('/.well-known/jwks.json').expect(200)).body as { keys: Record<string, unknown>[] };
      const jwk = jwks.keys.find((k) => k.kid === edKeyId)!;
      expect(jwk).toEqual({
        kty: 'OKP',
        crv: 'Ed25519',
        alg: 'EdDSA',
        use: 'sig',
        kid: edKeyId,
        x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        status: 'active',
        endorsements: ed.endorsements,
      });
      expect(pemOfJwk(jwk as { kty: string; crv: string; x: string })).toBe(ed.public_key_pem);
      const [entry] = await t.sql('SELECT details FROM audit_entries WHERE action = $1 ORDER BY id DESC LIMIT 1', ['signing_key.rotated']);
      expect(entry.details).toEqual({ key_id: edKeyId, previous_key_id: firstKeyId });
    });

    it('while Ed25519 is active: the legacy signature is Ed25519: + base64, and Node crypto verifies the envelope from the raw bytes alone', async () => {
      const { body } = await activated('env-ed25519');
      expect(body.signature).toMatch(/^Ed25519:[A-Za-z0-9+/]{86}==$/);
      expect(body.envelope).toMatchObject({ alg: 'EdDSA', key_id: edKeyId });
      const pem = (await publishedKeys()).find((k) => k.key_id === edKeyId)!.public_key_pem;
      const raw = Buffer.from(body.envelope.signature, 'base64url');
      expect(raw).toHaveLength(64);
      expect(verify(null, decoded(body.envelope), createPublicKey(pem), raw)).toBe(true);
      expect(JSON.parse(decoded(body.envelope).toString('utf8'))).toEqual(body.license);
      expect(verifySignedLicense(body, pem)).toEqual({ valid: true });
      expect(verifyEnvelope(body.envelope, await keyLookup())).toMatchObject({ ok: true });
    });

    it('rotating back to RSA (the default): the Ed25519 key endorses the new RSA key', async () => {
      const res = await t.admin.post(`${KEYS}/rotate`).expect(201);
      expect(res.body).toMatchObject({ algorithm: 'RSA-SHA256', endorsements: [{ key_id: edKeyId }] });
      const keys = await publishedKeys();
      const ed = keys.find((k) => k.key_id === edKeyId)!;
      expect(
        verifyEndorsement(createPublicKey(res.body.public_key_pem), res.body.endorsements[0].signature, createPublicKey(ed.public_key_pem)),
      ).toBe(true);
      expect((await activated('env-rsa-again')).body.signature).toMatch(/^RSA-SHA256:/);
    });

    it('rotate refuses an unknown algorithm or field: 400 VALIDATION_ERROR, nothing rotates', async () => {
      const before = (await publishedKeys())[0].key_id;
      for (const body of [{ algorithm: 'DSA' }, { algorithm: 'ed25519' }, { algorithm: null }, { algorithm: 'Ed25519', extra: 1 }]) {
        const res = await t.admin.post(`${KEYS}/rotate`).send(body).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      }
      expect((await publishedKeys())[0].key_id).toBe(before);
    });

    it('an offline root endorsement made by licence-server endorse-key is stored, published and audited; again replaces it', async () => {
      const root = generateKeyPairSync('ed25519').privateKey;
      const active = (await publishedKeys())[0];
      const body = endorsementBody(root, active.public_key_pem);
      expect(body.key_id).toBe(active.key_id);
      const res = await t.admin
        .post(`${KEYS}/${active.key_id}/endorsements`)
        .send({ public_key_pem: body.public_key_pem, signature: body.signature })
        .expect(201);
      const rootId = keyIdOf(body.public_key_pem);
      expect(res.body.endorsements).toEqual([expect.objectContaining({ key_id: edKeyId }), { key_id: rootId, signature: body.signature }]);
      // Other instances see it through the keyring's version, this one at once.
      expect((await publishedKeys())[0].endorsements.map((e) => e.key_id)).toEqual([edKeyId, rootId]);
      await t.admin
        .post(`${KEYS}/${active.key_id}/endorsements`)
        .send({ public_key_pem: body.public_key_pem, signature: body.signature })
        .expect(201);
      expect((await publishedKeys())[0].endorsements).toHaveLength(2);
      const [entry] = await t.sql('SELECT actor_type, details FROM audit_entries WHERE action = $1 ORDER BY id LIMIT 1', [
        'signing_key.endorsed',
      ]);
      expect(entry).toEqual({ actor_type: 'admin_api', details: { key_id: active.key_id, endorser_key_id: rootId } });
    });

    it('refuses an endorsement that does not verify, a key that endorses itself, garbage, an unknown key and a revoked key', async () => {
      const keys = await publishedKeys();
      const active = keys[0];
      const root = generateKeyPairSync('ed25519').privateKey;
      const rootPem = createPublicKey(root).export({ type: 'spki', format: 'pem' }).toString();
      const otherKey = createPublicKey(keys.find((k) => k.key_id === edKeyId)!.public_key_pem);
      const post = (keyId: string, body: unknown) => t.admin.post(`${KEYS}/${keyId}/endorsements`).send(body as object);
      // Signed for another key: not an endorsement of this one.
      const wrong = await post(active.key_id, { public_key_pem: rootPem, signature: signEndorsement(otherKey, root) }).expect(400);
      expect(fieldsOf(wrong.body)).toEqual(['signature']);
      const self = await post(active.key_id, { public_key_pem: active.public_key_pem, signature: 'AAAA' }).expect(400);
      expect(new Set(fieldsOf(self.body))).toEqual(new Set(['public_key_pem']));
      expect(fieldsOf((await post(active.key_id, { public_key_pem: 'not a key', signature: 'AAAA' }).expect(400)).body)).toEqual([
        'public_key_pem',
      ]);
      expect(fieldsOf((await post(active.key_id, { public_key_pem: rootPem, signature: 'padded==' }).expect(400)).body)).toEqual([
        'signature',
      ]);
      expect(new Set(fieldsOf((await post(active.key_id, { signature: 'AAAA' }).expect(400)).body))).toEqual(new Set(['public_key_pem']));
      const forActive = endorsementBody(root, active.public_key_pem);
      await post('0123456789abcdef', { public_key_pem: forActive.public_key_pem, signature: forActive.signature }).expect(404);

      await t.admin.post(`${KEYS}/${firstKeyId}/revoke`).send({}).expect(200);
      const first = keys.find((k) => k.key_id === firstKeyId)!;
      const { public_key_pem, signature } = endorsementBody(root, first.public_key_pem);
      const revoked = await post(firstKeyId, { public_key_pem, signature }).expect(409);
      expect(revoked.body.error.code).toBe('ALREADY_REVOKED');
    });

    it('a revoked key stays listed as revoked in /public-keys but leaves the JWK Set, and an envelope naming it is refused KEY_REVOKED', async () => {
      const listed = (await publishedKeys()).find((k) => k.key_id === firstKeyId);
      expect(listed).toMatchObject({ status: 'revoked' });
      expect((await publishedKeys()).map((k) => k.status)).toEqual(['active', 'retired', 'revoked']);
      const jwks = (await t.http().get('/.well-known/jwks.json').expect(200)).body as { keys: { kid: string; status: string }[] };
      expect(jwks.keys.map((k) => k.kid)).not.toContain(firstKeyId);
      expect(jwks.keys.map((k) => k.status).sort()).toEqual(['active', 'retired']);
      const envelope = { payload: 'e30', alg: 'RS256', key_id: firstKeyId, signature: 'AAAA' };
      expect(verifyEnvelope(envelope, await keyLookup())).toMatchObject({ ok: false, reason: 'KEY_REVOKED' });
    });

    it('a generic JOSE library (jose) given the JWK Set refuses a token signed by the revoked key (the attacker holds the leaked key)', async () => {
      // The first key is the test suite's own key file, so the test holds its private half, as whoever leaked it would.
      const leaked = createPrivateKey(readFileSync(process.env[ENV_SIGNING_KEY] as string));
      expect(keyIdOf(createPublicKey(leaked).export({ type: 'spki', format: 'pem' }).toString())).toBe(firstKeyId);
      const token = await new SignJWT({ sub: 'POS-FORGED', features: ['everything'] })
        .setProtectedHeader({ alg: 'RS256', kid: firstKeyId })
        .sign(leaked);
      // While the key verified (retired, not revoked) the same token was accepted: the token is well formed.
      await expect(jwtVerify(token, createLocalJWKSet(jwksBeforeRevocation))).resolves.toMatchObject({ payload: { sub: 'POS-FORGED' } });
      const now = (await t.http().get('/.well-known/jwks.json').expect(200)).body as JSONWebKeySet;
      await expect(jwtVerify(token, createLocalJWKSet(now))).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    });
  });
});
