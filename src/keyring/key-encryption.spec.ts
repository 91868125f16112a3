import { generateKeyPairSync } from 'node:crypto';
import { keyIdOf } from '../signing/license-signature';
import { KeyEncryption, KeyringDecryptionError } from './key-encryption';

describe('KeyEncryption (private keys at rest)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = keyIdOf(publicKey);
  const secret = 'a-keyring-secret-of-at-least-32-characters';
  const encryption = new KeyEncryption(secret);

  it('round-trips the private key', () => {
    const envelope = encryption.encrypt(privateKey, keyId);
    const decrypted = encryption.decrypt(envelope, keyId);
    expect(decrypted.export({ type: 'pkcs8', format: 'pem' })).toBe(privateKey.export({ type: 'pkcs8', format: 'pem' }));
    // A fresh salt and IV each time: the same key never gives the same ciphertext.
    expect(encryption.encrypt(privateKey, keyId)).not.toBe(envelope);
  });

  it('stores no readable key material', () => {
    const envelope = encryption.encrypt(privateKey, keyId);
    expect(envelope).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    const body = Buffer.from(envelope.split('.')[4], 'base64url');
    expect(body.length).toBe(der.length);
    expect(body.includes(der.subarray(0, 32))).toBe(false);
  });

  it('refuses another secret', () => {
    const envelope = encryption.encrypt(privateKey, keyId);
    expect(() => new KeyEncryption(secret + 'x').decrypt(envelope, keyId)).toThrow(KeyringDecryptionError);
    expect(() => new KeyEncryption(secret + 'x').decrypt(envelope, keyId)).toThrow(/KEYRING_SECRET/);
  });

  it('refuses a ciphertext moved to another key id, and any changed byte', () => {
    const envelope = encryption.encrypt(privateKey, keyId);
    expect(() => encryption.decrypt(envelope, '0000000000000000')).toThrow(KeyringDecryptionError);
    const parts = envelope.split('.');
    const body = Buffer.from(parts[4], 'base64url');
    body[10] ^= 1;
    expect(() => encryption.decrypt([...parts.slice(0, 4), body.toString('base64url')].join('.'), keyId)).toThrow(KeyringDecryptionError);
    expect(() => encryption.decrypt('v2.' + parts.slice(1).join('.'), keyId)).toThrow(KeyringDecryptionError);
    expect(() => encryption.decrypt('garbage', keyId)).toThrow(KeyringDecryptionError);
    // A tag cut to 4 bytes would be checked on those 4 only: refused, not half-verified.
    const shortTag = Buffer.from(parts[3], 'base64url').subarray(0, 4).toString('base64url');
    expect(() => encryption.decrypt([...parts.slice(0, 3), shortTag, parts[4]].join('.'), keyId)).toThrow(KeyringDecryptionError);
  });
});
