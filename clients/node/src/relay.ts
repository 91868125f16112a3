import { createPublicKey, type KeyObject } from 'node:crypto';
import { dearmor } from './armor.js';
import { algorithmOf, type KeySet, keyIdOf } from './crypto.js';
import { sameJson, verifyEnvelope } from './envelope.js';
import type { LicensePayload, SignedEnvelope } from './types.js';

/**
 * Leases from a relay on an offline network (docs/clients.md in the server's repository, Relay leases): the pool
 * file is signed by the vendor, the lease by the relay's own key that the pool names. Nothing the relay says is trusted
 * before both signatures check out.
 */

export const RELAY_POOL_LABEL = 'RELAY POOL';

/** The pool a vendor signed for one relay: `seats` of `license`, lent by the relay whose key is `relay_public_key`. */
export interface RelayPool {
  pool_id: string;
  /** The signed licence payload (its machine_fingerprint is the relay machine's). */
  license: LicensePayload;
  seats: number;
  /** SPKI PEM of the relay's Ed25519 key. */
  relay_public_key: string;
  relay_key_id: string;
  issued_at: string;
  expires_at: string;
}

/** One machine's lease of a seat of the pool. */
export interface RelayLease {
  lease_id: string;
  pool_id: string;
  machine_fingerprint: string;
  issued_at: string;
  expires_at: string;
  heartbeat_interval_seconds: number;
}

/** What `POST /relay/v1/leases` (and a heartbeat) answers. */
export interface RelayLeaseAnswer {
  lease: RelayLease;
  envelope: SignedEnvelope;
  pool_file: string;
}

/**
 * Why a relay's pool or lease is refused: the names of docs/test-vectors/relay.json (every envelope failure, an unknown
 * or revoked key included, is SIGNATURE_INVALID; the message names the envelope's own reason), and PRODUCT_MISMATCH.
 */
export type RelayReason =
  | 'MALFORMED_POOL_FILE'
  | 'SIGNATURE_INVALID'
  | 'POOL_MISMATCH'
  | 'WRONG_RELAY_KEY'
  | 'PRODUCT_MISMATCH'
  | 'POOL_EXPIRED'
  | 'LEASE_MISMATCH'
  | 'LEASE_EXPIRED';

export type Verified<T> = { ok: true; value: T } | { ok: false; reason: RelayReason; message: string };

export interface RelayPoolCheckInput {
  /** The keys trusted for vendor signatures (shipped, or endorsed by a shipped key). */
  keys: KeySet;
  /** Key ids listed as revoked. */
  revoked?: readonly string[];
  /** The application's product code: a pool of another product's licence is refused. */
  product?: string;
  now: Date;
}

export interface RelayCheckInput extends RelayPoolCheckInput {
  /** This machine's fingerprint. */
  fingerprint: string;
}

const refuse = <T>(reason: RelayReason, message: string): Verified<T> => ({ ok: false, reason, message });

/**
 * Verifies a pool file, in this order: the armor and its pool object (MALFORMED_POOL_FILE), the envelope with the vendor
 * keys (SIGNATURE_INVALID), the pool equal to the envelope's payload (POOL_MISMATCH), its members (MALFORMED_POOL_FILE),
 * the relay key named by its key id (WRONG_RELAY_KEY), the product (PRODUCT_MISMATCH), the expiry (POOL_EXPIRED).
 */
export function verifyRelayPool(poolFile: unknown, input: RelayPoolCheckInput): Verified<{ pool: RelayPool; relayKey: KeyObject }> {
  const file = dearmor(RELAY_POOL_LABEL, poolFile);
  if (!isObject(file) || !isObject(file.pool)) return refuse('MALFORMED_POOL_FILE', 'not a relay pool file with a pool object');
  const signed = verifyEnvelope(file.envelope, (id) => input.keys.get(id), input.revoked ?? []);
  if (!signed.ok) return refuse('SIGNATURE_INVALID', `the pool's envelope is refused (${signed.reason}): ${signed.message}`);
  if (!sameJson(file.pool, signed.value)) return refuse('POOL_MISMATCH', "the pool is not exactly the envelope's signed payload");
  const pool = signed.value;
  if (!isPool(pool)) return refuse('MALFORMED_POOL_FILE', 'the signed pool lacks pool_id, seats, expires_at or license');
  const relayKey = poolRelayKey(pool);
  if (!relayKey) return refuse('WRONG_RELAY_KEY', 'the pool names a relay key whose key id is not relay_key_id');
  if (input.product !== undefined && pool.license.product !== input.product) {
    return refuse('PRODUCT_MISMATCH', `the pool lends ${String(pool.license.product)}, not ${input.product}`);
  }
  if (!(input.now.getTime() < Date.parse(pool.expires_at))) return refuse('POOL_EXPIRED', `the pool expired at ${pool.expires_at}`);
  return { ok: true, value: { pool, relayKey } };
}

/**
 * Verifies a relay's lease answer: the pool file (verifyRelayPool), then the lease envelope with the pool's relay key and
 * no other (SIGNATURE_INVALID), the lease equal to its payload, of that pool and for this machine (LEASE_MISMATCH), and
 * not expired (LEASE_EXPIRED). The order and names are those of docs/test-vectors/relay.json.
 */
export function verifyRelayLease(answer: unknown, input: RelayCheckInput): Verified<{ lease: RelayLease; pool: RelayPool }> {
  if (!isObject(answer)) return refuse('MALFORMED_POOL_FILE', 'the relay answered no lease');
  const verifiedPool = verifyRelayPool(answer.pool_file, input);
  if (!verifiedPool.ok) return verifiedPool;
  const { pool, relayKey } = verifiedPool.value;
  // The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
  const signed = verifyEnvelope(answer.envelope, (id) => (id === pool.relay_key_id ? relayKey : undefined));
  if (!signed.ok) return refuse('SIGNATURE_INVALID', `the lease's envelope is refused (${signed.reason}): ${signed.message}`);
  if (!sameJson(answer.lease, signed.value)) return refuse('LEASE_MISMATCH', "the lease is not exactly the envelope's signed payload");
  const lease = signed.value;
  if (!isLease(lease)) return refuse('LEASE_MISMATCH', 'the lease lacks lease_id, expires_at or heartbeat_interval_seconds');
  if (lease.pool_id !== pool.pool_id || lease.machine_fingerprint !== input.fingerprint) {
    return refuse('LEASE_MISMATCH', 'the lease is for another pool or another machine');
  }
  if (!(input.now.getTime() < Date.parse(lease.expires_at))) return refuse('LEASE_EXPIRED', `the lease expired at ${lease.expires_at}`);
  return { ok: true, value: { lease, pool } };
}

/** The pool's relay key when it is an Ed25519 SPKI PEM whose key id is the pool's `relay_key_id`. */
function poolRelayKey(pool: unknown): KeyObject | undefined {
  if (!isObject(pool) || typeof pool.relay_public_key !== 'string') return undefined;
  try {
    const key = createPublicKey(pool.relay_public_key);
    return key.type === 'public' && algorithmOf(key) === 'Ed25519' && keyIdOf(key) === pool.relay_key_id ? key : undefined;
  } catch {
    return undefined;
  }
}

function isPool(value: unknown): value is RelayPool {
  return (
    isObject(value) &&
    typeof value.pool_id === 'string' &&
    typeof value.seats === 'number' &&
    isObject(value.license) &&
    typeof value.license.machine_fingerprint === 'string' &&
    typeof value.expires_at === 'string' &&
    !Number.isNaN(Date.parse(value.expires_at))
  );
}

function isLease(value: unknown): value is RelayLease {
  return (
    isObject(value) &&
    typeof value.lease_id === 'string' &&
    typeof value.pool_id === 'string' &&
    typeof value.machine_fingerprint === 'string' &&
    typeof value.expires_at === 'string' &&
    !Number.isNaN(Date.parse(value.expires_at)) &&
    typeof value.heartbeat_interval_seconds === 'number' &&
    value.heartbeat_interval_seconds > 0
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
