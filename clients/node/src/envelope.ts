import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { algorithmOf, keyIdOf, keyOfJwk, verifyBytes } from './crypto.js';
import { canonicalize } from './jcs.js';
import type { Endorsement, EnvelopeReason, KeyTrustReason, PublicJwk } from './types.js';

/**
 * Envelopes and endorsement chains (docs/signing.md, Envelopes; Endorsed rotation): decode, verify, then parse; no
 * canonicalization on the verifying side. The reasons are those of docs/test-vectors/conformance.json.
 */

/** Strict unpadded base64url: the URL alphabet only, and exactly the spelling base64url gives the decoded bytes. */
export function decodeBase64url(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

export type EnvelopeResult = { ok: true; keyId: string; value: unknown } | { ok: false; reason: EnvelopeReason; message: string };

const MEMBERS = ['alg', 'key_id', 'payload', 'signature'];
const ALG: Record<string, string> = { 'RSA-SHA256': 'RS256', Ed25519: 'EdDSA' };

/** Checks an envelope: shape, encodings, key (trusted, not revoked), alg against the key, signature, then parses the payload. */
export function verifyEnvelope(
  envelope: unknown,
  keyFor: (keyId: string) => KeyObject | undefined,
  revoked: readonly string[] = [],
): EnvelopeResult {
  const refuse = (reason: EnvelopeReason, message: string): EnvelopeResult => ({ ok: false, reason, message });
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return refuse('MALFORMED_ENVELOPE', 'not an object');
  const e = envelope as Record<string, unknown>;
  if (Object.keys(e).sort().join() !== MEMBERS.join() || !MEMBERS.every((m) => typeof e[m] === 'string'))
    return refuse('MALFORMED_ENVELOPE', 'an envelope has exactly the strings payload, alg, key_id and signature');
  if (e.alg !== 'RS256' && e.alg !== 'EdDSA') return refuse('MALFORMED_ENVELOPE', `unknown alg ${JSON.stringify(e.alg)}`);
  const bytes = decodeBase64url(e.payload);
  const signature = decodeBase64url(e.signature);
  if (!bytes || !signature) return refuse('NON_CANONICAL_ENCODING', 'payload and signature must be base64url without padding');
  const keyId = e.key_id as string;
  if (revoked.includes(keyId)) return refuse('KEY_REVOKED', `key ${keyId} is revoked`);
  const key = keyFor(keyId);
  if (!key) return refuse('UNKNOWN_KEY', `signed with key ${keyId}, which this client does not trust`);
  const algorithm = algorithmOf(key);
  if (!algorithm || ALG[algorithm] !== e.alg) return refuse('ALG_MISMATCH', `alg ${String(e.alg)} does not match key ${keyId}`);
  if (!verifyBytes(bytes, key, signature)) return refuse('INVALID_SIGNATURE', 'the signature does not match the payload');
  try {
    return { ok: true, keyId, value: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown };
  } catch {
    return refuse('MALFORMED_PAYLOAD', 'the payload is not UTF-8 JSON');
  }
}

/** Whether two JSON values are equal member for member (compared in their RFC 8785 form). */
export function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalize(a) === canonicalize(b);
  } catch {
    return false;
  }
}

/** ASCII `licence-server-endorsement-v1:` + base64url of the RFC 7638 SHA-256 thumbprint of the endorsed key's JWK. */
export function endorsementMessage(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  const required = jwk.kty === 'RSA' ? { e: jwk.e, kty: jwk.kty, n: jwk.n } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  const thumbprint = createHash('sha256').update(JSON.stringify(required), 'utf8').digest('base64url');
  return Buffer.from(`licence-server-endorsement-v1:${thumbprint}`, 'ascii');
}

export function verifyEndorsement(key: KeyObject, signature: unknown, endorser: KeyObject): boolean {
  const bytes = decodeBase64url(signature);
  return bytes !== undefined && verifyBytes(endorsementMessage(key), endorser, bytes);
}

/** A key as a server lists it (`/api/v1/public-keys` entry or JWK), reduced to what trust needs. */
export interface ListedKey {
  keyId: string;
  key: KeyObject;
  revoked: boolean;
  endorsements: Endorsement[];
}

export interface TrustResult {
  /** Listed keys trusted through an endorsement chain (the anchors themselves are not repeated). */
  endorsed: Map<string, KeyObject>;
  /** Key ids the server lists as revoked: dropped, shipped or not. */
  revoked: string[];
  /** Why each other listed key is not trusted. */
  refused: Map<string, KeyTrustReason>;
}

/** The listed keys of a `/public-keys` answer or a JWK Set; entries whose id is not their key's id are skipped. */
export function listedKeys(entries: unknown): ListedKey[] {
  const listed: ListedKey[] = [];
  for (const entry of Array.isArray(entries) ? (entries as Record<string, unknown>[]) : []) {
    const key = typeof entry?.public_key_pem === 'string' ? publicKeyOfPem(entry.public_key_pem) : keyOfJwk(entry as Partial<PublicJwk>);
    if (!key || !algorithmOf(key)) continue;
    const keyId = keyIdOf(key);
    const named = entry.key_id ?? entry.kid;
    if (named !== undefined && named !== keyId) continue;
    const endorsements = Array.isArray(entry.endorsements)
      ? (entry.endorsements as Endorsement[]).filter((e) => typeof e?.key_id === 'string' && typeof e.signature === 'string')
      : [];
    listed.push({ keyId, key, revoked: entry.status === 'revoked', endorsements });
  }
  return listed;
}

/**
 * Which listed keys to trust: the anchors (shipped keys and offline roots) that are not listed as revoked, then every key
 * endorsed by a trusted key, until nothing changes. Never a key without a chain back to an anchor.
 */
export function resolveTrust(anchors: Map<string, KeyObject>, listed: ListedKey[]): TrustResult {
  const revoked = listed.filter((k) => k.revoked).map((k) => k.keyId);
  const trusted = new Map([...anchors].filter(([id]) => !revoked.includes(id)));
  const endorsed = new Map<string, KeyObject>();
  for (let changed = true; changed;) {
    changed = false;
    for (const k of listed) {
      if (k.revoked || trusted.has(k.keyId)) continue;
      if (k.endorsements.some((e) => trusted.has(e.key_id) && verifyEndorsement(k.key, e.signature, trusted.get(e.key_id)!))) {
        trusted.set(k.keyId, k.key);
        endorsed.set(k.keyId, k.key);
        changed = true;
      }
    }
  }
  const byId = new Map(listed.map((k) => [k.keyId, k]));
  const refused = new Map<string, KeyTrustReason>();
  for (const k of listed) {
    if (trusted.has(k.keyId)) continue;
    refused.set(k.keyId, k.revoked ? 'KEY_REVOKED' : distrustReason(k, byId, trusted, revoked));
  }
  return { endorsed, revoked, refused };
}

function distrustReason(
  k: ListedKey,
  byId: Map<string, ListedKey>,
  trusted: Map<string, KeyObject>,
  revoked: readonly string[],
): KeyTrustReason {
  if (k.endorsements.length === 0) return 'UNENDORSED_KEY';
  if (k.endorsements.some((e) => trusted.has(e.key_id))) return 'INVALID_ENDORSEMENT';
  if (leadsBack(k.keyId, byId, trusted)) return 'ENDORSEMENT_LOOP';
  if (k.endorsements.some((e) => revoked.includes(e.key_id))) return 'ENDORSER_REVOKED';
  return 'ENDORSER_UNKNOWN';
}

/** Whether following untrusted endorsers from `start` comes back to `start`. */
function leadsBack(start: string, byId: Map<string, ListedKey>, trusted: Map<string, KeyObject>): boolean {
  const seen = new Set<string>();
  const queue = [...(byId.get(start)?.endorsements ?? [])].map((e) => e.key_id);
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (id === start) return true;
    if (seen.has(id) || trusted.has(id)) continue;
    seen.add(id);
    queue.push(...(byId.get(id)?.endorsements ?? []).map((e) => e.key_id));
  }
  return false;
}

function publicKeyOfPem(pem: string): KeyObject | undefined {
  try {
    const key = createPublicKey(pem);
    return key.type === 'public' ? key : undefined;
  } catch {
    return undefined;
  }
}
