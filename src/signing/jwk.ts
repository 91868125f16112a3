import { exportJWK } from 'jose';
import { createPublicKey, KeyObject } from 'node:crypto';

/** One RFC 7517 JWK of a signing key, as GET /.well-known/jwks.json publishes it. */
export interface SigningJwk {
  kty: 'RSA';
  kid: string;
  alg: 'RS256';
  use: 'sig';
  n: string;
  e: string;
}

/** The public key as a JWK (jose's export: n and e in base64url), named by key_id; RSASSA-PKCS1-v1_5 + SHA-256 is JWA's RS256. */
export async function publicJwkOf(publicKey: KeyObject | string, keyId: string): Promise<SigningJwk> {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  const { kty, n, e } = await exportJWK(key);
  if (kty !== 'RSA' || typeof n !== 'string' || typeof e !== 'string') throw new TypeError('not an RSA public key');
  return { kty: 'RSA', kid: keyId, alg: 'RS256', use: 'sig', n, e };
}

/** The PEM (SubjectPublicKeyInfo) of an RSA JWK: what a client does with a key from the JWK Set. */
export function pemOfJwk(jwk: { kty: string; n: string; e: string }): string {
  return createPublicKey({ key: { kty: jwk.kty, n: jwk.n, e: jwk.e }, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
}
