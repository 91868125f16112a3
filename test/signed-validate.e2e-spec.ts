import { randomBytes } from 'node:crypto';
import { verifySignedAnswer } from '../src/signing/license-signature';
import { fieldsOf } from './support/api-errors';
import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

// Start-up of the app and RSA key generation (rotations) take seconds on a busy machine.
jest.setTimeout(30_000);

const nonce = () => randomBytes(18).toString('base64url');

/** docs/client-api.md, Signed validation: POST /validate with a nonce answers signed; without one exactly as before. */
describe('signed validate answers', () => {
  let t: TestApp;
  let licenseKey: string;
  let publicKeyPem: string;
  const fp = fingerprint('signed-validate');

  beforeAll(async () => {
    t = await createTestApp();
    licenseKey = (await createLicense(t)).license_key;
    await t.http().post('/api/v1/activate').send({ license_key: licenseKey, machine_fingerprint: fp, hostname: 'h' }).expect(200);
    publicKeyPem = (await t.http().get('/api/v1/public-key').expect(200)).body.public_key_pem;
  }, 60_000);
  afterAll(() => t.close());

  const validate = (body: Record<string, unknown>) => t.http().post('/api/v1/validate').send(body);

  it("without a nonce: the fields of an unsigned answer (with the usage meter's two), nothing signed", async () => {
    const res = await validate({ license_key: licenseKey, machine_fingerprint: fp }).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'expires_at', 'grace_ends_at', 'max_uses', 'revoked', 'status', 'uses', 'valid']);
  });

  it('with a nonce: the answer echoes it, names the licence, machine, time and key, and its signature verifies', async () => {
    const n = nonce();
    const before = Date.now();
    const res = await validate({
      license_key: ` ${licenseKey.toLowerCase()} `,
      machine_fingerprint: fp.toUpperCase().replace('SHA256', 'sha256'),
      nonce: n,
    }).expect(200);
    const keyId = (await t.http().get('/api/v1/public-key')).body.key_id as string;
    expect(res.body).toEqual({
      valid: true,
      status: 'active',
      expires_at: expect.stringMatching(/Z$/),
      revoked: false,
      grace_ends_at: expect.stringMatching(/Z$/),
      code: null,
      uses: null,
      max_uses: null,
      nonce: n,
      license_key: licenseKey,
      machine_fingerprint: fp,
      checked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      key_id: keyId,
      signature: expect.stringMatching(/^RSA-SHA256:[A-Za-z0-9+/]{342}==$/),
    });
    expect(Date.parse(res.body.checked_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(verifySignedAnswer(res.body, publicKeyPem, n)).toEqual({ valid: true });
  });

  it('a negative answer is signed too (a machine without a seat)', async () => {
    const n = nonce();
    const res = await validate({ license_key: licenseKey, machine_fingerprint: fingerprint('no seat'), nonce: n }).expect(200);
    expect(res.body).toMatchObject({ valid: false, code: 'NOT_ACTIVATED', nonce: n });
    expect(verifySignedAnswer(res.body, publicKeyPem, n)).toEqual({ valid: true });
  });

  describe('tampering', () => {
    let answer: Record<string, unknown>;
    const sent = nonce();
    beforeAll(async () => {
      answer = (await validate({ license_key: licenseKey, machine_fingerprint: fp, nonce: sent }).expect(200)).body;
    }, 60_000);

    it.each([
      ['valid', false],
      ['status', 'expired'],
      ['expires_at', '2099-01-01T00:00:00.000Z'],
      ['revoked', true],
      ['grace_ends_at', null],
      ['code', 'KEY_REVOKED'],
      ['license_key', 'POS-00000-00000-00000-00000'],
      ['machine_fingerprint', fingerprint('other machine')],
      ['checked_at', '2099-01-01T00:00:00.000Z'],
      ['key_id', '0000000000000000'],
    ])('changing %s makes it fail', (field, value) => {
      expect(verifySignedAnswer(answer, publicKeyPem, sent)).toEqual({ valid: true });
      const result = verifySignedAnswer({ ...answer, [field]: value }, publicKeyPem, sent);
      expect(result.valid).toBe(false);
    });

    it('an added or removed member, or a changed signature, makes it fail', () => {
      expect(verifySignedAnswer({ ...answer, extra: 1 }, publicKeyPem, sent).valid).toBe(false);
      const without = { ...answer };
      delete without.grace_ends_at;
      expect(verifySignedAnswer(without, publicKeyPem, sent).valid).toBe(false);
      const raw = Buffer.from(String(answer.signature).slice('RSA-SHA256:'.length), 'base64');
      raw[7] ^= 1;
      expect(verifySignedAnswer({ ...answer, signature: 'RSA-SHA256:' + raw.toString('base64') }, publicKeyPem, sent).valid).toBe(false);
    });

    it('a replayed answer fails the check of the nonce the client sent this time', () => {
      const result = verifySignedAnswer(answer, publicKeyPem, nonce());
      expect(result).toEqual({ valid: false, reason: expect.stringMatching(/nonce/) });
      // ...and rewriting the nonce breaks the signature.
      const rewritten = nonce();
      expect(verifySignedAnswer({ ...answer, nonce: rewritten }, publicKeyPem, rewritten).valid).toBe(false);
    });
  });

  it('accepts nonces of 16 and 128 characters of A-Z a-z 0-9 _ -', async () => {
    for (const n of ['a'.repeat(16), 'Zz09_-'.repeat(21) + 'xy']) {
      const res = await validate({ license_key: licenseKey, machine_fingerprint: fp, nonce: n }).expect(200);
      expect(verifySignedAnswer(res.body, publicKeyPem, n)).toEqual({ valid: true });
    }
  });

  it.each([
    ['15 characters', 'a'.repeat(15)],
    ['129 characters', 'a'.repeat(129)],
    ['a space', 'abcdefgh ijklmnop'],
    ['a dot', 'abcdefgh.ijklmnop'],
    ['non-ASCII', 'abcdefghijklmnopč'],
    ['padding', 'abcdefghijklmnop='],
    ['the empty string', ''],
    ['a number', 1234567890123456],
    ['null', null],
    ['an array', ['abcdefghijklmnop']],
    ['an object', { nonce: 'abcdefghijklmnop' }],
  ])('a nonce with %s: 400 VALIDATION_ERROR naming nonce', async (_label, value) => {
    const res = await validate({ license_key: licenseKey, machine_fingerprint: fp, nonce: value }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect([...new Set(fieldsOf(res.body))]).toEqual(['nonce']);
  });

  it('an unknown key with a nonce: 400 INVALID_KEY, unsigned like every error', async () => {
    const res = await validate({ license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: fp, nonce: nonce() }).expect(400);
    expect(res.body.error.code).toBe('INVALID_KEY');
    expect(res.body.signature).toBeUndefined();
  });
});
