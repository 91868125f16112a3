import { Inject, Injectable } from '@nestjs/common';
import { sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ConcurrencyLimit } from '../common/concurrency/concurrency-limit';
import { canonicalBytes, SIGNATURE_PREFIX, verifySignature } from './license-signature';
import type { SigningKey } from './signing-key';

export { canonicalBytes, SIGNATURE_PREFIX } from './license-signature';

export const SIGNING_KEY = Symbol('SIGNING_KEY');

/**
 * Signs licence payloads with RSASSA-PKCS1-v1_5 / SHA-256 (CONTRACT 4). The key is parsed once;
 * signing runs on libuv's thread pool (async crypto.sign) so the event loop stays free.
 */
@Injectable()
export class SigningService {
  // Signatures in the thread pool at once: all but one core. With every core signing, the event loop (which
  // every request needs, and which runs the activation's transaction) got a fraction of one and throughput fell.
  private readonly signing = new ConcurrencyLimit(Math.max(1, availableParallelism() - 1));

  constructor(@Inject(SIGNING_KEY) private readonly key: SigningKey) {}

  get keyId(): string {
    return this.key.keyId;
  }

  get publicKeyPem(): string {
    return this.key.publicKeyPem;
  }

  sign(payload: unknown): Promise<string> {
    const data = canonicalBytes(payload);
    return this.signing.run(
      () =>
        new Promise((resolve, reject) =>
          sign('sha256', data, this.key.privateKey, (err, signature) =>
            err ? reject(err) : resolve(SIGNATURE_PREFIX + signature.toString('base64')),
          ),
        ),
    );
  }

  /** Checks a signature made by this server's key (used by tests and the dashboard preview). */
  verify(payload: unknown, signature: string): boolean {
    return verifySignature(payload, signature, this.key.publicKeyPem);
  }
}
