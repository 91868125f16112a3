import { createHash, KeyObject, sign, verify } from 'node:crypto';

/**
 * Signed envelopes and endorsements (docs/signing.md, Envelopes): the signed bytes travel as they were signed, so a
 * verifier decodes, verifies and only then parses; no canonicalization on the verifying side. Pure, like the rest of signing/.
 */

/** The keyring's names of the algorithms (`/public-keys` `algorithm`). */
export const SIGNING_ALGORITHMS = ['RSA-SHA256', 'Ed25519'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** The JOSE names an envelope carries in `alg`. */
export type EnvelopeAlg = 'RS256' | 'EdDSA';
export const ENVELOPE_ALG: Record<SigningAlgorithm, EnvelopeAlg> = { 'RSA-SHA256': 'RS256', Ed25519: 'EdDSA' };

/** `{payload, alg, key_id, signature}`: payload and signature are base64url without padding. */
export interface SignedEnvelope {
  payload: string;
  alg: EnvelopeAlg;
  key_id: string;
  signature: string;
}

/** The prefix of the legacy `signature` field: `RSA-SHA256:` or `Ed25519:`, then standard base64. */
export const legacyPrefix = (algorithm: SigningAlgorithm) => `${algorithm}:`;

/** The keyring algorithm of a key (private or public), or undefined for a key type the keyring does not use. */
export function algorithmOfKey(key: KeyObject): SigningAlgorithm | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RSA-SHA256';
  if (key.asymmetricKeyType === 'ed25519') return 'Ed25519';
  return undefined;
}

/** The digest argument of node:crypto's sign/verify: SHA-256 for RSA, none for Ed25519 (it hashes internally). */
export const digestOf = (algorithm: SigningAlgorithm) => (algorithm === 'RSA-SHA256' ? 'sha256' : null);

export const base64url = (bytes: Buffer | Uint8Array): string => Buffer.from(bytes).toString('base64url');

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Strict base64url without padding: only the URL alphabet, and exactly the text base64url would write for the decoded
 * bytes (so `=` padding, `+` and `/`, whitespace and non-zero trailing bits are all refused: one payload, one spelling).
 */
export function decodeBase64url(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || !BASE64URL.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** An envelope around bytes already signed: `signature` is the raw signature. */
export function envelopeOf(bytes: Buffer, algorithm: SigningAlgorithm, keyId: string, signature: Buffer): SignedEnvelope {
  return { payload: base64url(bytes), alg: ENVELOPE_ALG[algorithm], key_id: keyId, signature: base64url(signature) };
}

/** Why an envelope or an endorsement is refused: stable codes every client reports the same way (docs/test-vectors). */
export type EnvelopeRefusal =
  | 'MALFORMED_ENVELOPE'
  | 'NON_CANONICAL_ENCODING'
  | 'UNKNOWN_KEY'
  | 'KEY_REVOKED'
  | 'ALG_MISMATCH'
  | 'INVALID_SIGNATURE'
  | 'MALFORMED_PAYLOAD';

export type EnvelopeVerdict =
  { ok: true; keyId: string; bytes: Buffer; value: unknown } | { ok: false; reason: EnvelopeRefusal; message: string };

/** A verifier's view of one key: the public key, and whether the server lists it as revoked. */
export interface VerifyingKey {
  key: KeyObject;
  revoked?: boolean;
}

const ENVELOPE_MEMBERS = ['alg', 'key_id', 'payload', 'signature'];

/**
 * Checks an envelope in the order every client follows: shape, encodings, key (known, not revoked), `alg` against the
 * key's type, the signature over the decoded bytes, and only then parses the payload as JSON.
 */
export function verifyEnvelope(envelope: unknown, keyFor: (keyId: string) => VerifyingKey | undefined): EnvelopeVerdict {
  const refuse = (reason: EnvelopeRefusal, message: string): EnvelopeVerdict => ({ ok: false, reason, message });
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return refuse('MALFORMED_ENVELOPE', 'not an object');
  const e = envelope as Record<string, unknown>;
  if (Object.keys(e).sort().join() !== ENVELOPE_MEMBERS.join() || !ENVELOPE_MEMBERS.every((m) => typeof e[m] === 'string'))
    return refuse('MALFORMED_ENVELOPE', 'an envelope has exactly the strings payload, alg, key_id and signature');
  if (e.alg !== 'RS256' && e.alg !== 'EdDSA') return refuse('MALFORMED_ENVELOPE', `unknown alg ${JSON.stringify(e.alg)}`);
  const bytes = decodeBase64url(e.payload);
  const signature = decodeBase64url(e.signature);
  if (!bytes || !signature) return refuse('NON_CANONICAL_ENCODING', 'payload and signature must be base64url without padding');
  const keyId = e.key_id as string;
  const known = keyFor(keyId);
  if (!known) return refuse('UNKNOWN_KEY', `key ${keyId} is not trusted`);
  if (known.revoked) return refuse('KEY_REVOKED', `key ${keyId} is revoked`);
  const algorithm = algorithmOfKey(known.key);
  if (!algorithm || ENVELOPE_ALG[algorithm] !== e.alg) return refuse('ALG_MISMATCH', `alg ${String(e.alg)} does not match key ${keyId}`);
  if (!verifiesBytes(algorithm, bytes, known.key, signature))
    return refuse('INVALID_SIGNATURE', 'the signature does not match the payload');
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return refuse('MALFORMED_PAYLOAD', 'the payload is not UTF-8 JSON');
  }
  return { ok: true, keyId, bytes, value };
}

function verifiesBytes(algorithm: SigningAlgorithm, bytes: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return verify(digestOf(algorithm), bytes, key, signature);
  } catch {
    return false;
  }
}

/** RFC 7638 thumbprint (SHA-256) of a public key's JWK: the required members in lexicographic order, no whitespace. */
export function jwkThumbprint(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const required =
    jwk.kty === 'RSA' ? { e: jwk.e, kty: jwk.kty, n: jwk.n } : jwk.kty === 'OKP' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x } : undefined;
  if (!required) throw new TypeError(`no thumbprint for key type ${String(jwk.kty)}`);
  return createHash('sha256').update(JSON.stringify(required), 'utf8').digest();
}

export const ENDORSEMENT_PREFIX = 'licence-server-endorsement-v1:';

/** The ASCII message an endorsing key signs for `newKey`: the prefix and base64url of the new key's thumbprint. */
export function endorsementMessage(newKey: KeyObject): Buffer {
  return Buffer.from(ENDORSEMENT_PREFIX + base64url(jwkThumbprint(newKey)), 'ascii');
}

/** The endorsement of `newKey` by `endorser` (a private key), unpadded base64url. Synchronous: one signature per rotation. */
export function signEndorsement(newKey: KeyObject, endorser: KeyObject): string {
  const algorithm = algorithmOfKey(endorser);
  if (!algorithm) throw new TypeError('endorsing keys are RSA or Ed25519');
  return base64url(sign(digestOf(algorithm), endorsementMessage(newKey), endorser));
}

/** Whether `signature` (unpadded base64url) is `endorser`'s endorsement of `newKey`. */
export function verifyEndorsement(newKey: KeyObject, signature: unknown, endorser: KeyObject): boolean {
  const algorithm = algorithmOfKey(endorser);
  const bytes = decodeBase64url(signature);
  return algorithm !== undefined && bytes !== undefined && verifiesBytes(algorithm, endorsementMessage(newKey), endorser, bytes);
}
