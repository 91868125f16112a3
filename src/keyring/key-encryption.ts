import { createPrivateKey, KeyObject } from 'node:crypto';
import { SecretEnvelope } from '../common/crypto/secret-envelope';

const HKDF_INFO = 'licence-server keyring v1 aes-256-gcm';

/** The secret does not open this key: KEYRING_SECRET differs from the one that encrypted it, or the row was altered. */
export class KeyringDecryptionError extends Error {
  constructor(readonly keyId: string) {
    super(`signing key ${keyId} cannot be decrypted with this KEYRING_SECRET`);
    this.name = 'KeyringDecryptionError';
  }
}

/**
 * Private keys at rest (docs/signing.md, "Encryption at rest"): AES-256-GCM under a key derived with HKDF-SHA256 from KEYRING_SECRET and a
 * random salt per key; the key_id is the additional authenticated data, so a ciphertext cannot be moved to another row.
 * Stored as `v1.<salt>.<iv>.<tag>.<ciphertext>` (base64url) of the PKCS#8 DER: a database dump alone reveals no key.
 */
export class KeyEncryption {
  private readonly envelope: SecretEnvelope;

  constructor(secret: string) {
    this.envelope = new SecretEnvelope(secret, HKDF_INFO);
  }

  encrypt(privateKey: KeyObject, keyId: string): string {
    return this.envelope.seal(privateKey.export({ type: 'pkcs8', format: 'der' }), keyId);
  }

  /** Throws KeyringDecryptionError when the secret (or the envelope) is not the one this key was stored with. */
  decrypt(envelope: string, keyId: string): KeyObject {
    try {
      return createPrivateKey({ key: this.envelope.open(envelope, keyId), format: 'der', type: 'pkcs8' });
    } catch {
      throw new KeyringDecryptionError(keyId);
    }
  }
}
