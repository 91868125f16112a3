import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** The envelope does not open: another secret, another purpose or associated data, or an altered byte. */
export class EnvelopeOpenError extends Error {
  constructor() {
    super('the envelope cannot be opened with this secret and associated data');
    this.name = 'EnvelopeOpenError';
  }
}

/**
 * Secrets at rest under KEYRING_SECRET (docs/signing.md, "Encryption at rest"): AES-256-GCM under a key derived with
 * HKDF-SHA256 from the secret, a random salt per envelope and `purpose` (so one kind of ciphertext never opens as
 * another); `aad` names the row it belongs to. Stored as `v1.<salt>.<iv>.<tag>.<ciphertext>` (base64url).
 */
export class SecretEnvelope {
  constructor(
    private readonly secret: string,
    private readonly purpose: string,
  ) {}

  seal(plaintext: Buffer, aad: string): string {
    const salt = randomBytes(16);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keyFor(salt), iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return [VERSION, ...[salt, iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url'))].join('.');
  }

  /** Throws EnvelopeOpenError unless `envelope` was sealed with this secret, purpose and `aad`, unaltered. */
  open(envelope: string, aad: string): Buffer {
    const parts = envelope.split('.');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new EnvelopeOpenError();
    const [salt, iv, tag, ciphertext] = parts.slice(1).map((p) => Buffer.from(p, 'base64url'));
    try {
      // A full 16-byte tag only: GCM would otherwise accept a truncated one, which is easier to forge.
      const decipher = createDecipheriv('aes-256-gcm', this.keyFor(salt), iv, { authTagLength: 16 });
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      throw new EnvelopeOpenError();
    }
  }

  private keyFor(salt: Buffer): Buffer {
    return Buffer.from(hkdfSync('sha256', Buffer.from(this.secret, 'utf8'), salt, this.purpose, 32));
  }
}
