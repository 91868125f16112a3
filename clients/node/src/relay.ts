import { createPublicKey, type KeyObject } from 'node:crypto';
import { dearmor } from './armor.js';
import { algorithmOf, type KeySet, keyIdOf } from './crypto.js';
import { sameJson, verifyEnvelope } from './envelope.js';
import type { EnvelopeReason, LicensePayload, SignedEnvelope } from './types.js';

/**
 * Leases from a relay on an offline network (docs/relay.md in the server's repository, What a client checks): the pool
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

export type RelayReason = EnvelopeReason | 'PRODUCT_MISMATCH' | 'POOL_EXPIRED' | 'WRONG_SUBJECT' | 'FINGERPRINT_MISMATCH' | 'LEASE_EXPIRED';

export type VerifiedRelayLease =
  | { ok: true; lease: RelayLease; pool: RelayPool; relayKeyId: string }
  | { ok: false; reason: RelayReason; message: string };

export interface RelayCheckInput {
  /** The keys trusted for vendor signatures (shipped, or endorsed by a shipped key). */
  keys: KeySet;
  /** Key ids listed as revoked. */
  revoked?: readonly string[];
  /** This machine's fingerprint. */
  fingerprint: string;
  /** The application's product code: a pool of another product's licence is refused. */
  product?: string;
  now: Date;
}

/**
 * Verifies a relay's lease answer, in this order: the pool file's armor, its envelope with the vendor keys, the pool equal
 * to the envelope's payload, the pool's own members (the relay key's id), product, the pool's expiry; then the lease
 * envelope with the pool's relay key and nothing else, the lease equal to its payload, the pool it names, this machine's
 * fingerprint, the lease's expiry. Every refusal has a stable reason (clients/conformance-format.md, relay_lease).
 */
export function verifyRelayLease(answer: unknown, input: RelayCheckInput): VerifiedRelayLease {
  const refuse = (reason: RelayReason, message: string): VerifiedRelayLease => ({ ok: false, reason, message });
  if (!isObject(answer)) return refuse('MALFORMED_ENVELOPE', 'the relay answered no lease');
  const file = dearmor(RELAY_POOL_LABEL, answer.pool_file);
  if (!isObject(file) || !('pool' in file) || !('envelope' in file)) return refuse('MALFORMED_ENVELOPE', 'not a relay pool file');
  const signedPool = verifyEnvelope(file.envelope, (id) => input.keys.get(id), input.revoked ?? []);
  if (!signedPool.ok) return refuse(signedPool.reason, `the pool file: ${signedPool.message}`);
  if (!sameJson(file.pool, signedPool.value)) return refuse('PAYLOAD_MISMATCH', "the pool differs from the vendor's signed payload");
  const pool = signedPool.value;
  const relayKey = poolRelayKey(pool);
  if (!isPool(pool) || !relayKey) return refuse('MALFORMED_PAYLOAD', 'the pool lacks a relay Ed25519 key that matches relay_key_id');
  if (input.product !== undefined && pool.license.product !== input.product) {
    return refuse('PRODUCT_MISMATCH', `the pool lends ${String(pool.license.product)}, not ${input.product}`);
  }
  if (!(input.now.getTime() < Date.parse(pool.expires_at))) return refuse('POOL_EXPIRED', `the pool expired at ${pool.expires_at}`);

  const envelope = answer.envelope;
  if (isObject(envelope) && typeof envelope.key_id === 'string' && envelope.key_id !== pool.relay_key_id) {
    return refuse('INVALID_SIGNATURE', `the lease is signed by key ${envelope.key_id}, not by the pool's relay key ${pool.relay_key_id}`);
  }
  // The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
  const signedLease = verifyEnvelope(envelope, (id) => (id === pool.relay_key_id ? relayKey : undefined));
  if (!signedLease.ok) return refuse(signedLease.reason, `the lease: ${signedLease.message}`);
  if (!sameJson(answer.lease, signedLease.value)) return refuse('PAYLOAD_MISMATCH', "the lease differs from the relay's signed payload");
  const lease = signedLease.value;
  if (!isLease(lease)) return refuse('MALFORMED_PAYLOAD', 'the lease lacks lease_id, expires_at or heartbeat_interval_seconds');
  if (lease.pool_id !== pool.pool_id) return refuse('WRONG_SUBJECT', `the lease is of pool ${lease.pool_id}, not ${pool.pool_id}`);
  if (lease.machine_fingerprint !== input.fingerprint) return refuse('FINGERPRINT_MISMATCH', 'the lease was made for another machine');
  if (!(input.now.getTime() < Date.parse(lease.expires_at))) return refuse('LEASE_EXPIRED', `the lease expired at ${lease.expires_at}`);
  return { ok: true, lease, pool, relayKeyId: pool.relay_key_id };
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
    isObject(value.license) &&
    typeof value.relay_key_id === 'string' &&
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
