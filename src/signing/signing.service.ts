import { KeyObject, sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ConcurrencyLimit } from './concurrency-limit';
import { canonicalBytes, SIGNATURE_PREFIX } from './license-signature';

export { canonicalBytes, SIGNATURE_PREFIX } from './license-signature';

/**
 * Signs payloads with RSASSA-PKCS1-v1_5 / SHA-256 over their canonical bytes (docs/client-api.md, The signed licence) with the key it is given
 * (the keyring hands it the active key, parsed once). Signing runs on libuv's thread pool (async crypto.sign)
 * so the event loop stays free.
 * A plain class (signing/ knows no Nest): the keyring module provides the one instance (docs/signing.md).
 */
export class SigningService {
  // Signatures in the thread pool at once: all but one core. With every core signing, the event loop (which
  // every request needs, and which runs the activation's transaction) got a fraction of one and throughput fell.
  private readonly signing = new ConcurrencyLimit(Math.max(1, availableParallelism() - 1));

  sign(payload: unknown, privateKey: KeyObject): Promise<string> {
    const data = canonicalBytes(payload);
    return this.signing.run(
      () =>
        new Promise((resolve, reject) =>
          sign('sha256', data, privateKey, (err, signature) =>
            err ? reject(err) : resolve(SIGNATURE_PREFIX + signature.toString('base64')),
          ),
        ),
    );
  }
}
