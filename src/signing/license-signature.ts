import canonicalize from 'canonicalize';
import { createHash, createPublicKey, KeyObject, verify } from 'node:crypto';
import { algorithmOfKey, digestOf, legacyPrefix } from './envelope';

/**
 * The signature format (docs/client-api.md, The signed licence), free of Nest and of any database, so that
 * src/cli/verify-license.ts and client code can use exactly what the server uses.
 */
export const SIGNATURE_PREFIX = 'RSA-SHA256:';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** RFC 8785 (JCS) canonical JSON of a value, as UTF-8 bytes: the exact bytes that are signed. */
export function canonicalBytes(value: unknown): Buffer {
  const json = canonicalize(value);
  if (json === undefined) throw new TypeError('value cannot be canonicalized');
  return Buffer.from(json, 'utf8');
}

/** First 16 hex chars of SHA-256 over the DER SubjectPublicKeyInfo (docs/client-api.md, Public keys). */
export function keyIdOf(publicKey: KeyObject | string): string {
  const der = (typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex').slice(0, 16);
}

/** Checks a legacy signature over the canonical bytes of `payload`: `RSA-SHA256:<base64>` for an RSA key, `Ed25519:<base64>` for an Ed25519 key. */
export function verifySignature(payload: unknown, signature: string, publicKey: KeyObject | string): boolean {
  try {
    const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
    const algorithm = algorithmOfKey(key);
    if (!algorithm || typeof signature !== 'string' || !signature.startsWith(legacyPrefix(algorithm))) return false;
    const base64 = signature.slice(legacyPrefix(algorithm).length);
    if (!BASE64.test(base64)) return false;
    return verify(digestOf(algorithm), canonicalBytes(payload), key, Buffer.from(base64, 'base64'));
  } catch {
    return false;
  }
}

export type LicenseVerification = { valid: true } | { valid: false; reason: string };

/** Verifies a saved activation response `{license, signature}` against a public key (PEM). */
export function verifySignedLicense(document: unknown, publicKeyPem: string): LicenseVerification {
  const { license, signature } = (document ?? {}) as { license?: unknown; signature?: unknown };
  if (typeof license !== 'object' || license === null || Array.isArray(license)) return { valid: false, reason: 'no "license" object' };
  if (typeof signature !== 'string') return { valid: false, reason: 'no "signature" string' };
  const publicKey = createPublicKey(publicKeyPem);
  const keyId = (license as { key_id?: unknown }).key_id;
  if (keyId !== undefined && keyId !== keyIdOf(publicKey)) {
    return {
      valid: false,
      reason: `signed with key ${typeof keyId === 'string' ? keyId : JSON.stringify(keyId)}, but this public key is ${keyIdOf(publicKey)}`,
    };
  }
  return verifySignature(license, signature, publicKey)
    ? { valid: true }
    : { valid: false, reason: 'the signature does not match the licence data' };
}

/**
 * Verifies a signed validate answer (docs/client-api.md, Signed validation): the signature covers the JCS form of the answer without its
 * `signature` member, and the answer must echo the nonce this caller sent (else it is a replayed answer).
 */
export function verifySignedAnswer(answer: unknown, publicKeyPem: string, expectedNonce: string): LicenseVerification {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    return { valid: false, reason: 'the answer is not a JSON object' };
  // The envelope (when asked for) carries the same signature: it is not part of the signed bytes.
  const { signature, envelope: _envelope, ...signed } = answer as Record<string, unknown>;
  if (typeof signature !== 'string') return { valid: false, reason: 'no "signature" string' };
  if (signed.nonce !== expectedNonce) {
    return { valid: false, reason: `the answer carries nonce ${JSON.stringify(signed.nonce)}, not the one sent (a replayed answer?)` };
  }
  const publicKey = createPublicKey(publicKeyPem);
  if (signed.key_id !== keyIdOf(publicKey)) {
    return { valid: false, reason: `signed with key ${String(signed.key_id)}, but this public key is ${keyIdOf(publicKey)}` };
  }
  return verifySignature(signed, signature, publicKey)
    ? { valid: true }
    : { valid: false, reason: 'the signature does not match the answer' };
}
