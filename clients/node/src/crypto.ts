import { createHash, createPublicKey, KeyObject, verify } from 'node:crypto';
import { canonicalize } from './jcs.js';
import type { JsonWebKeySet, PublicKeyInput } from './types.js';

export const SIGNATURE_PREFIX = 'RSA-SHA256:';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** RFC 8785 (JCS) canonical JSON as UTF-8: the exact bytes the server signs. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}

/** First 16 hex digits of SHA-256 over the DER SubjectPublicKeyInfo: the server's `key_id`. */
export function keyIdOf(key: KeyObject): string {
  return createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

/** Checks `RSA-SHA256:<base64>` (PKCS#1 v1.5, SHA-256) over the canonical bytes of `value`. */
export function verifySignature(value: unknown, signature: unknown, key: KeyObject): boolean {
  if (typeof signature !== 'string' || !signature.startsWith(SIGNATURE_PREFIX)) return false;
  const base64 = signature.slice(SIGNATURE_PREFIX.length);
  if (!BASE64.test(base64)) return false;
  try {
    return verify('sha256', canonicalBytes(value), key, Buffer.from(base64, 'base64'));
  } catch {
    return false;
  }
}

/**
 * Public keys by `key_id`. The id is always computed from the key itself, never taken from the input,
 * so a mislabelled key cannot stand in for another.
 */
export class KeySet {
  private readonly keys = new Map<string, KeyObject>();

  static from(pems: PublicKeyInput[] = [], jwks?: JsonWebKeySet): KeySet {
    const set = new KeySet();
    for (const { public_key_pem } of pems) set.add(createPublicKey(public_key_pem));
    if (jwks) set.addJwks(jwks);
    return set;
  }

  add(key: KeyObject): string {
    if (key.type !== 'public' || key.asymmetricKeyType !== 'rsa') throw new TypeError('only RSA public keys are used for licences');
    const id = keyIdOf(key);
    this.keys.set(id, key);
    return id;
  }

  /** Adds the RSA keys of a JWK Set; keys whose `kid` is not their real key id are ignored. */
  addJwks(jwks: JsonWebKeySet): string[] {
    const added: string[] = [];
    for (const jwk of Array.isArray(jwks?.keys) ? jwks.keys : []) {
      if (jwk?.kty !== 'RSA' || typeof jwk.n !== 'string' || typeof jwk.e !== 'string') continue;
      try {
        const key = createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
        if (keyIdOf(key) === jwk.kid) added.push(this.add(key));
      } catch {
        // a malformed key in a set is skipped; the others still count
      }
    }
    return added;
  }

  get(keyId: unknown): KeyObject | undefined {
    return typeof keyId === 'string' ? this.keys.get(keyId) : undefined;
  }

  has(keyId: unknown): boolean {
    return this.get(keyId) !== undefined;
  }

  ids(): string[] {
    return [...this.keys.keys()];
  }

  /** This set without the given key ids. */
  without(keyIds: readonly string[]): KeySet {
    const kept = new KeySet();
    for (const [id, key] of this.keys) if (!keyIds.includes(id)) kept.add(key);
    return kept;
  }

  merge(other: KeySet): KeySet {
    const merged = new KeySet();
    for (const [, key] of this.keys) merged.add(key);
    for (const [, key] of other.keys) merged.add(key);
    return merged;
  }

  toJwks(): JsonWebKeySet {
    return {
      keys: [...this.keys].map(([kid, key]) => {
        const { n, e } = key.export({ format: 'jwk' });
        return { kty: 'RSA' as const, kid, alg: 'RS256', use: 'sig', n: String(n), e: String(e) };
      }),
    };
  }
}
