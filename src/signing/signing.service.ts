import { KeyObject, sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ConcurrencyLimit } from './concurrency-limit';
import { algorithmOfKey, digestOf, envelopeOf, legacyPrefix, SignedEnvelope, SigningAlgorithm } from './envelope';
import { canonicalBytes } from './license-signature';

export { canonicalBytes, SIGNATURE_PREFIX } from './license-signature';

/** The key a signature is made with: the keyring's active key, parsed once. */
export interface SignerKey {
  keyId: string;
  privateKey: KeyObject;
  algorithm: SigningAlgorithm;
}

/** One signature in both forms: the legacy `signature` field and the envelope around the same bytes (docs/signing.md, Envelopes). */
export interface SignedBytes {
  signature: string;
  envelope: SignedEnvelope;
}

/**
 * Signs payloads over their canonical bytes (docs/client-api.md, The signed licence) with the key it is given (the keyring
 * hands it the active key, parsed once): RSASSA-PKCS1-v1_5 / SHA-256 for an RSA key, Ed25519 for an Ed25519 key.
 * Signing runs on libuv's thread pool (async crypto.sign) so the event loop stays free.
 * A plain class (signing/ knows no Nest): the keyring module provides the one instance (docs/signing.md).
 */
export class SigningService {
  // Signatures in the thread pool at once: all but one core. With every core signing, the event loop (which
  // every request needs, and which runs the activation's transaction) got a fraction of one and throughput fell.
  private readonly signing = new ConcurrencyLimit(Math.max(1, availableParallelism() - 1));

  /** The legacy `signature` field alone: `RSA-SHA256:` or `Ed25519:` + standard base64, by the key's type. */
  async sign(payload: unknown, privateKey: KeyObject): Promise<string> {
    const algorithm = algorithmOrThrow(privateKey);
    return legacyPrefix(algorithm) + (await this.signBytes(canonicalBytes(payload), privateKey, algorithm)).toString('base64');
  }

  /** The legacy field and the envelope of the same signature over the payload's canonical bytes. */
  async signWithEnvelope(payload: unknown, key: SignerKey): Promise<SignedBytes> {
    const bytes = canonicalBytes(payload);
    const raw = await this.signBytes(bytes, key.privateKey, key.algorithm);
    return { signature: legacyPrefix(key.algorithm) + raw.toString('base64'), envelope: envelopeOf(bytes, key.algorithm, key.keyId, raw) };
  }

  private signBytes(data: Buffer, privateKey: KeyObject, algorithm: SigningAlgorithm): Promise<Buffer> {
    return this.signing.run(
      () => new Promise((resolve, reject) => sign(digestOf(algorithm), data, privateKey, (err, raw) => (err ? reject(err) : resolve(raw)))),
    );
  }
}

function algorithmOrThrow(key: KeyObject): SigningAlgorithm {
  const algorithm = algorithmOfKey(key);
  if (!algorithm) throw new TypeError(`cannot sign with a ${String(key.asymmetricKeyType)} key`);
  return algorithm;
}
