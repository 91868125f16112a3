import { createPublicKey, KeyObject, sign } from 'node:crypto';
import { envelopeOf, SignedEnvelope, verifyEnvelope, VerifyingKey } from '../signing/envelope';
import { canonicalBytes, keyIdOf } from '../signing/license-signature';

/**
 * The relay's documents (docs/relay.md, Issuing a pool; The relay API): the pool request a relay prints, the pool file the vendor signs, and
 * the lease a relay signs. Pure: no I/O, so the vendor's server, the relay, the test-vector script and the tests
 * build and read them with one definition.
 */
export const POOL_REQUEST_LABEL = 'RELAY POOL REQUEST';
export const POOL_FILE_LABEL = 'RELAY POOL';
/** A pool request is well under a kilobyte, a pool file a few; anything near the body limit is neither. */
export const MAX_ARMOR_LENGTH = 32 * 1024;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** What `relay init` prints, armored: the relay asks for `seats` of the licence, for its machine and its key. */
export interface PoolRequest {
  license_key: string;
  relay_fingerprint: string;
  /** SubjectPublicKeyInfo PEM of the relay's Ed25519 key. */
  relay_public_key: string;
  seats: number;
}

/** The signed part of a pool file: `license` is the signed licence payload issued to the relay's machine. */
export interface Pool {
  pool_id: string;
  license: Record<string, unknown> & { license_key: string; machine_fingerprint: string };
  seats: number;
  relay_public_key: string;
  relay_key_id: string;
  issued_at: string;
  expires_at: string;
}

export interface PoolFile {
  pool: Pool;
  envelope: SignedEnvelope;
}

/** A lease a relay lends to one machine, signed by the relay's key. */
export interface Lease {
  lease_id: string;
  pool_id: string;
  machine_fingerprint: string;
  issued_at: string;
  expires_at: string;
  heartbeat_interval_seconds: number;
}

/** Base64 of the JSON in lines of 64 characters between two markers (the armor of licence files). */
export function armorJson(label: string, value: unknown): string {
  const lines =
    Buffer.from(JSON.stringify(value), 'utf8')
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`, ''].join('\n');
}

/**
 * Reads an armor strictly: the size, both markers, only base64 between them, and a UTF-8 JSON object inside. Blank
 * lines, surrounding whitespace, CRLF and a byte-order mark are tolerated (e-mail and editors add them). Returns
 * the object or the reason it is refused.
 */
export function dearmorJson(label: string, text: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  if (typeof text !== 'string') return { ok: false, message: 'must be text' };
  if (text.length > MAX_ARMOR_LENGTH) return { ok: false, message: `must be at most ${MAX_ARMOR_LENGTH} characters` };
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines[0] !== `-----BEGIN ${label}-----` || lines[lines.length - 1] !== `-----END ${label}-----`)
    return { ok: false, message: `must start with -----BEGIN ${label}----- and end with -----END ${label}-----` };
  const base64 = lines.slice(1, -1).join('');
  if (base64 === '' || !BASE64.test(base64)) return { ok: false, message: 'must contain base64 between its markers' };
  let value: unknown;
  try {
    value = JSON.parse(strictUtf8.decode(Buffer.from(base64, 'base64')));
  } catch {
    return { ok: false, message: 'does not contain UTF-8 JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: 'must contain a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** The key id of a PEM public key (the keyring's DER-SPKI rule), or undefined when it is not an Ed25519 public key. */
export function relayKeyIdOf(pem: unknown): string | undefined {
  if (typeof pem !== 'string' || pem.length > 1024) return undefined;
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType === 'ed25519' ? keyIdOf(key) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a pool file or a lease is refused: the envelope's reasons, and the relay's own. */
export type PoolRefusal =
  | 'MALFORMED_POOL_FILE'
  | 'SIGNATURE_INVALID'
  | 'POOL_MISMATCH'
  | 'WRONG_MACHINE'
  | 'WRONG_RELAY_KEY'
  | 'POOL_EXPIRED'
  | 'LEASE_MISMATCH'
  | 'LEASE_EXPIRED';

export type Verdict<T> = { ok: true; value: T } | { ok: false; reason: PoolRefusal; message: string };

/** Equal as JSON values (member order aside): their JCS bytes are the same. */
function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalBytes(a).equals(canonicalBytes(b));
  } catch {
    return false;
  }
}

const refuse = <T>(reason: PoolRefusal, message: string): Verdict<T> => ({ ok: false, reason, message });

/**
 * A pool file checked as the relay and every client check it (docs/relay.md, What is checked): the armor, the
 * envelope with the vendor's keys (`keyFor`: trusted keys by id), `pool` exactly the envelope's decoded payload,
 * and the relay key named by its key id. Time and machine are the caller's (checkPoolFor).
 */
export function verifyPoolFile(text: unknown, keyFor: (keyId: string) => VerifyingKey | undefined): Verdict<PoolFile> {
  const armored = dearmorJson(POOL_FILE_LABEL, text);
  if (!armored.ok) return refuse('MALFORMED_POOL_FILE', `the pool file ${armored.message}`);
  const { pool, envelope } = armored.value;
  if (typeof pool !== 'object' || pool === null || Array.isArray(pool))
    return refuse('MALFORMED_POOL_FILE', 'the pool file has no pool object');
  const verdict = verifyEnvelope(envelope, keyFor);
  if (!verdict.ok) return refuse('SIGNATURE_INVALID', `the pool's envelope is refused (${verdict.reason}): ${verdict.message}`);
  if (!sameJson(verdict.value, pool)) return refuse('POOL_MISMATCH', "the pool is not exactly the envelope's signed payload");
  const signed = verdict.value as Partial<Pool>;
  if (
    typeof signed.pool_id !== 'string' ||
    typeof signed.seats !== 'number' ||
    typeof signed.expires_at !== 'string' ||
    typeof signed.license !== 'object' ||
    signed.license === null ||
    typeof signed.license.machine_fingerprint !== 'string'
  )
    return refuse('MALFORMED_POOL_FILE', 'the signed pool lacks pool_id, seats, expires_at or license');
  if (relayKeyIdOf(signed.relay_public_key) !== signed.relay_key_id)
    return refuse('WRONG_RELAY_KEY', 'the pool names a relay key whose key id is not relay_key_id');
  return { ok: true, value: { pool: signed as Pool, envelope: envelope as SignedEnvelope } };
}

/** The relay's start-up check of its own pool: made for this machine and this relay key, and not expired at `now`. */
export function checkPoolFor(pool: Pool, machineFingerprint: string, relayKeyId: string, now: Date): Verdict<Pool> {
  if (pool.license.machine_fingerprint !== machineFingerprint)
    return refuse('WRONG_MACHINE', `the pool was made for machine ${pool.license.machine_fingerprint}, this is ${machineFingerprint}`);
  if (pool.relay_key_id !== relayKeyId)
    return refuse('WRONG_RELAY_KEY', `the pool was made for relay key ${pool.relay_key_id}, this relay's key is ${relayKeyId}`);
  if (!(Date.parse(pool.expires_at) > now.getTime())) return refuse('POOL_EXPIRED', `the pool expired at ${pool.expires_at}`);
  return { ok: true, value: pool };
}

/** The lease envelope: Ed25519 over the JCS bytes of the lease, named by the relay's key id. */
export function signLease(lease: Lease, relayKey: KeyObject, relayKeyId: string): SignedEnvelope {
  const bytes = canonicalBytes(lease);
  return envelopeOf(bytes, 'Ed25519', relayKeyId, sign(null, bytes, relayKey));
}

/**
 * A lease as a client checks it once the pool verified: the envelope with the pool's relay key (and no other), the
 * lease its decoded payload, for this pool and this machine, and not expired at `now`.
 */
export function verifyLease(
  answer: { lease?: unknown; envelope?: unknown },
  pool: Pool,
  machineFingerprint: string,
  now: Date,
): Verdict<Lease> {
  const relayKey = createPublicKey(pool.relay_public_key);
  const verdict = verifyEnvelope(answer.envelope, (id) => (id === pool.relay_key_id ? { key: relayKey } : undefined));
  if (!verdict.ok) return refuse('SIGNATURE_INVALID', `the lease's envelope is refused (${verdict.reason}): ${verdict.message}`);
  if (!sameJson(verdict.value, answer.lease)) return refuse('LEASE_MISMATCH', "the lease is not exactly the envelope's payload");
  const lease = verdict.value as Lease;
  if (lease.pool_id !== pool.pool_id || lease.machine_fingerprint !== machineFingerprint)
    return refuse('LEASE_MISMATCH', 'the lease is for another pool or another machine');
  if (!(Date.parse(lease.expires_at) > now.getTime())) return refuse('LEASE_EXPIRED', `the lease expired at ${lease.expires_at}`);
  return { ok: true, value: lease };
}
