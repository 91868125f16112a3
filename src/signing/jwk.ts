import { exportJWK } from 'jose';
import { createPublicKey, KeyObject } from 'node:crypto';

/** One RFC 7517 JWK of a signing key, as GET /.well-known/jwks.json publishes it: RSA (RS256) or Ed25519 (OKP, EdDSA). */
export interface SigningJwk {
  kty: 'RSA' | 'OKP';
  kid: string;
  alg: 'RS256' | 'EdDSA';
  use: 'sig';
  /** RSA: modulus and exponent. */
  n?: string;
  e?: string;
  /** Ed25519: the curve and the public key. */
  crv?: 'Ed25519';
  x?: string;
}

/**
 * The public key as a JWK (jose's export: base64url members), named by key_id. RSASSA-PKCS1-v1_5 + SHA-256 is JWA's RS256;
 * an Ed25519 key is RFC 8037's OKP key with alg EdDSA.
 */
export async function publicJwkOf(publicKey: KeyObject | string, keyId: string): Promise<SigningJwk> {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  const { kty, n, e, crv, x } = await exportJWK(key);
  if (kty === 'RSA' && typeof n === 'string' && typeof e === 'string') return { kty: 'RSA', kid: keyId, alg: 'RS256', use: 'sig', n, e };
  if (kty === 'OKP' && crv === 'Ed25519' && typeof x === 'string') return { kty: 'OKP', kid: keyId, alg: 'EdDSA', use: 'sig', crv, x };
  throw new TypeError('not an RSA or Ed25519 public key');
}

/** The PEM (SubjectPublicKeyInfo) of an RSA or Ed25519 JWK: what a client does with a key from the JWK Set. */
export function pemOfJwk(jwk: { kty: string; n?: string; e?: string; crv?: string; x?: string }): string {
  const key = jwk.kty === 'OKP' ? { kty: 'OKP', crv: jwk.crv, x: jwk.x } : { kty: jwk.kty, n: jwk.n, e: jwk.e };
  return createPublicKey({ key, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
}
