import { generateKeyPairSync } from 'node:crypto';
import { KeyEncryption } from '../keyring/key-encryption';
import { isPlainSecret, WebhookSecretCipher, WebhookSecretDecryptionError } from './webhook-secrets';
import { newWebhookSecret } from './webhooks.service';

describe('WebhookSecretCipher (webhook secrets at rest)', () => {
  const keyringSecret = 'a-keyring-secret-of-at-least-32-characters';
  const cipher = new WebhookSecretCipher(keyringSecret);
  const secret = newWebhookSecret();

  it('round-trips the secret; a fresh salt and IV each time', () => {
    const sealed = cipher.seal(secret, 7);
    expect(cipher.open(sealed, 7)).toBe(secret);
    expect(cipher.seal(secret, 7)).not.toBe(sealed);
  });

  it('stores neither the secret nor its key bytes, in any encoding, and fits the column', () => {
    const sealed = cipher.seal(secret, 7);
    const keyBytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(isPlainSecret(sealed)).toBe(false);
    for (const form of [secret, secret.slice(6), keyBytes.toString('base64url'), keyBytes.toString('hex')])
      expect(sealed).not.toContain(form.slice(0, 12));
    expect(sealed.length).toBeLessThanOrEqual(200);
  });

  it('attacker: a ciphertext copied to another endpoint does not open there', () => {
    expect(() => cipher.open(cipher.seal(secret, 7), 8)).toThrow(WebhookSecretDecryptionError);
    expect(() => cipher.open(cipher.seal(secret, 7), 70)).toThrow(/webhook endpoint 70 .*KEYRING_SECRET/);
  });

  it('attacker: another KEYRING_SECRET, a changed byte or a truncated tag does not open it', () => {
    const sealed = cipher.seal(secret, 7);
    expect(() => new WebhookSecretCipher(keyringSecret + 'x').open(sealed, 7)).toThrow(WebhookSecretDecryptionError);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[4], 'base64url');
    body[3] ^= 1;
    expect(() => cipher.open([...parts.slice(0, 4), body.toString('base64url')].join('.'), 7)).toThrow(WebhookSecretDecryptionError);
    const shortTag = Buffer.from(parts[3], 'base64url').subarray(0, 4).toString('base64url');
    expect(() => cipher.open([...parts.slice(0, 3), shortTag, parts[4]].join('.'), 7)).toThrow(WebhookSecretDecryptionError);
    expect(() => cipher.open(secret, 7)).toThrow(WebhookSecretDecryptionError);
  });

  it("attacker: a signing key's ciphertext is no webhook secret, and the other way round (separate HKDF purposes)", () => {
    const keys = new KeyEncryption(keyringSecret);
    const { privateKey } = generateKeyPairSync('ed25519');
    expect(() => cipher.open(keys.encrypt(privateKey, '7'), 7)).toThrow(WebhookSecretDecryptionError);
    expect(() => keys.decrypt(cipher.seal(secret, 7), 'webhook_endpoints:7')).toThrow(/KEYRING_SECRET/);
  });

  it('tells a plain secret from before the upgrade', () => {
    expect(isPlainSecret(secret)).toBe(true);
  });
});
