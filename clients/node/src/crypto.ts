import { createHash, createPublicKey, KeyObject, verify } from 'node:crypto';
import { canonicalize } from './jcs.js';
import type { JsonWebKeySet, PublicJwk, PublicKeyInput } from './types.js';

export const SIGNATURE_PREFIX = 'RSA-SHA256:';
export const ED25519_PREFIX = 'Ed25519:';

/** The server's name of a key's algorithm, or undefined for a key type licences are never signed with. */
export function algorithmOf(key: KeyObject): 'RSA-SHA256' | 'Ed25519' | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RSA-SHA256';
  if (key.asymmetricKeyType === 'ed25519') return 'Ed25519';
  return undefined;
}

/** node:crypto's digest argument: SHA-256 for RSA (PKCS#1 v1.5), none for Ed25519. */
export const digestFor = (key: KeyObject) => (algorithmOf(key) === 'Ed25519' ? null : 'sha256');

/** Verifies raw signature bytes over raw bytes; false instead of throwing. */
export function verifyBytes(bytes: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return algorithmOf(key) !== undefined && verify(digestFor(key), bytes, key, signature);
  } catch {
    return false;
  }
}
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

/** Checks `RSA-SHA256:<base64>` (PKCS#1 v1.5, SHA-256) or, for an Ed25519 key, `Ed25519:<base64>` over the canonical bytes of `value`. */
export function verifySignature(value: unknown, signature: unknown, key: KeyObject): boolean {
  const prefix = algorithmOf(key) === 'Ed25519' ? ED25519_PREFIX : SIGNATURE_PREFIX;
  if (typeof signature !== 'string' || !signature.startsWith(prefix)) return false;
  const base64 = signature.slice(prefix.length);
  if (!BASE64.test(base64)) return false;
  try {
    return verifyBytes(canonicalBytes(value), key, Buffer.from(base64, 'base64'));
  } catch {
    return false;
  }
}

/** A public key from a JWK of the set (RSA or OKP/Ed25519), or undefined when it is neither or malformed. */
export function keyOfJwk(jwk: Partial<PublicJwk> | undefined): KeyObject | undefined {
  try {
    if (jwk?.kty === 'RSA' && typeof jwk.n === 'string' && typeof jwk.e === 'string')
      return createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
    if (jwk?.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string')
      return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  } catch {
    // malformed: not a key
  }
  return undefined;
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
    if (key.type !== 'public' || !algorithmOf(key)) throw new TypeError('only RSA and Ed25519 public keys are used for licences');
    const id = keyIdOf(key);
    this.keys.set(id, key);
    return id;
  }

  /** Adds the RSA and Ed25519 keys of a JWK Set; keys whose `kid` is not their real key id, or listed as revoked, are ignored. */
  addJwks(jwks: JsonWebKeySet): string[] {
    const added: string[] = [];
    for (const jwk of Array.isArray(jwks?.keys) ? jwks.keys : []) {
      const key = keyOfJwk(jwk);
      // a malformed key in a set is skipped; the others still count
      if (key && keyIdOf(key) === jwk.kid && jwk.status !== 'revoked') added.push(this.add(key));
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
      keys: [...this.keys].map(([kid, key]): PublicJwk => {
        const { n, e, x } = key.export({ format: 'jwk' });
        return algorithmOf(key) === 'Ed25519'
          ? { kty: 'OKP', crv: 'Ed25519', kid, alg: 'EdDSA', use: 'sig', x: String(x) }
          : { kty: 'RSA', kid, alg: 'RS256', use: 'sig', n: String(n), e: String(e) };
      }),
    };
  }
}
