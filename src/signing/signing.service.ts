import { Inject, Injectable } from '@nestjs/common';
import canonicalize from 'canonicalize';
import { sign, verify } from 'node:crypto';
import type { SigningKey } from './signing-key';

export const SIGNING_KEY = Symbol('SIGNING_KEY');
export const SIGNATURE_PREFIX = 'RSA-SHA256:';

/** RFC 8785 (JCS) canonical JSON of a value, as UTF-8 bytes: the exact bytes that are signed. */
export function canonicalBytes(value: unknown): Buffer {
  const json = canonicalize(value);
  if (json === undefined) throw new TypeError('value cannot be canonicalized');
  return Buffer.from(json, 'utf8');
}

/**
 * Signs licence payloads with RSASSA-PKCS1-v1_5 / SHA-256 (CONTRACT 4). The key is parsed once;
 * signing runs on libuv's thread pool (async crypto.sign) so the event loop stays free.
 */
@Injectable()
export class SigningService {
  constructor(@Inject(SIGNING_KEY) private readonly key: SigningKey) {}

  get keyId(): string {
    return this.key.keyId;
  }

  get publicKeyPem(): string {
    return this.key.publicKeyPem;
  }

  sign(payload: unknown): Promise<string> {
    const data = canonicalBytes(payload);
    return new Promise((resolve, reject) =>
      sign('sha256', data, this.key.privateKey, (err, signature) =>
        err ? reject(err) : resolve(SIGNATURE_PREFIX + signature.toString('base64')),
      ),
    );
  }

  /** Checks a signature made by this server's key (used by tests and the dashboard preview). */
  verify(payload: unknown, signature: string): boolean {
    if (!signature.startsWith(SIGNATURE_PREFIX)) return false;
    const raw = Buffer.from(signature.slice(SIGNATURE_PREFIX.length), 'base64');
    return verify('sha256', canonicalBytes(payload), this.key.publicKeyPem, raw);
  }
}
