import { generateKeyPairSync, sign } from 'node:crypto';
import { canonicalBytes, keyIdOf, verifySignedLicense, verifySignature } from './license-signature';

describe('verifySignedLicense (what src/cli/verify-license.ts runs)', () => {
  const keyPair = () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { privateKey, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  };
  const ours = keyPair();
  const theirs = keyPair();
  const license = { license_key: 'POS-1', expires_at: null, limits: { max_installations: 1 }, key_id: keyIdOf(ours.pem) };
  const signed = { license, signature: 'RSA-SHA256:' + sign('sha256', canonicalBytes(license), ours.privateKey).toString('base64') };

  it('accepts a genuine payload', () => {
    expect(verifySignedLicense(signed, ours.pem)).toEqual({ valid: true });
    expect(verifySignedLicense(JSON.parse(JSON.stringify(signed)), ours.pem)).toEqual({ valid: true });
  });

  it.each([
    ['a changed member', { ...signed, license: { ...license, license_key: 'POS-2' } }, /does not match/],
    ['an added member', { ...signed, license: { ...license, extra: true } }, /does not match/],
    ['a missing signature', { license }, /no "signature"/],
    ['no licence object', { license: [license], signature: signed.signature }, /no "license"/],
    ['another prefix', { ...signed, signature: signed.signature.replace('RSA-SHA256:', 'RSA-SHA512:') }, /does not match/],
    ['non-base64 text', { ...signed, signature: 'RSA-SHA256:***' }, /does not match/],
  ])('rejects %s', (_label, document, reason) => {
    const result = verifySignedLicense(document, ours.pem);
    expect(result.valid).toBe(false);
    expect(!result.valid && result.reason).toMatch(reason);
  });

  it('names the key when the payload was signed by another key', () => {
    const result = verifySignedLicense(signed, theirs.pem);
    expect(result).toEqual({ valid: false, reason: `signed with key ${keyIdOf(ours.pem)}, but this public key is ${keyIdOf(theirs.pem)}` });
  });

  it('verifySignature never throws on garbage', () => {
    expect(verifySignature(license, 'RSA-SHA256:AAAA', ours.pem)).toBe(false);
    expect(verifySignature(license, undefined as unknown as string, ours.pem)).toBe(false);
  });
});
