import { createCipheriv, createDecipheriv, createPrivateKey, hkdfSync, KeyObject, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const HKDF_INFO = 'licence-server keyring v1 aes-256-gcm';

/** The secret does not open this key: KEYRING_SECRET differs from the one that encrypted it, or the row was altered. */
export class KeyringDecryptionError extends Error {
  constructor(readonly keyId: string) {
    super(`signing key ${keyId} cannot be decrypted with this KEYRING_SECRET`);
    this.name = 'KeyringDecryptionError';
  }
}

/**
 * Private keys at rest (CONTRACT 7): AES-256-GCM under a key derived with HKDF-SHA256 from KEYRING_SECRET and a
 * random salt per key; the key_id is the additional authenticated data, so a ciphertext cannot be moved to another row.
 * Stored as `v1.<salt>.<iv>.<tag>.<ciphertext>` (base64url) of the PKCS#8 DER: a database dump alone reveals no key.
 */
export class KeyEncryption {
  constructor(private readonly secret: string) {}

  encrypt(privateKey: KeyObject, keyId: string): string {
    const salt = randomBytes(16);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keyFor(salt), iv);
    cipher.setAAD(Buffer.from(keyId, 'utf8'));
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    const ciphertext = Buffer.concat([cipher.update(der), cipher.final()]);
    return [VERSION, salt, iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** Throws KeyringDecryptionError when the secret (or the envelope) is not the one this key was stored with. */
  decrypt(envelope: string, keyId: string): KeyObject {
    const parts = envelope.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new KeyringDecryptionError(keyId);
    const [salt, iv, tag, ciphertext] = parts.slice(1).map((p) => Buffer.from(p, 'base64url'));
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.keyFor(salt), iv);
      decipher.setAAD(Buffer.from(keyId, 'utf8'));
      decipher.setAuthTag(tag);
      const der = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    } catch {
      throw new KeyringDecryptionError(keyId);
    }
  }

  private keyFor(salt: Buffer): Buffer {
    return Buffer.from(hkdfSync('sha256', Buffer.from(this.secret, 'utf8'), salt, HKDF_INFO, 32));
  }
}
