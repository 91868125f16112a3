import { createPublicKey, KeyObject, sign } from 'node:crypto';
import { algorithmOfKey, base64url, digestOf, ENVELOPE_ALG, SignedEnvelope } from '../src/signing/envelope';
import { canonicalBytes, keyIdOf } from '../src/signing/license-signature';
import { armorJson, Lease, Pool, POOL_FILE_LABEL, signLease } from '../src/relay/pool-file';

/**
 * docs/test-vectors/relay.json (docs/relay.md, Test vectors): pool files and leases every client checks the same way.
 * Deterministic: RSASSA-PKCS1-v1_5 and Ed25519 signatures depend only on the key and the bytes, and every time and
 * id here is fixed. TEST KEYS ONLY.
 */
export interface RelayVectorKeys {
  /** The vendor's RSA key (docs/test-vectors/test-key.pem) and its Ed25519 key ("ed25519" in test-keys.json). */
  vendorRsa: KeyObject;
  vendorEd25519: KeyObject;
  /** The relay's key ("relay") and a key nobody trusts ("stranger"). */
  relay: KeyObject;
  stranger: KeyObject;
}

const NOW = '2026-02-01T09:00:00.000Z';
const RELAY_FINGERPRINT = 'sha256:' + 'fedcba9876543210'.repeat(4);
const MACHINE = 'sha256:' + '00112233445566778899aabbccddeeff'.repeat(2);
const pemOf = (key: KeyObject) => createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
const idOf = (key: KeyObject) => keyIdOf(createPublicKey(key));

function envelopeBy(value: unknown, key: KeyObject): SignedEnvelope {
  const bytes = canonicalBytes(value);
  const algorithm = algorithmOfKey(key)!;
  return {
    payload: base64url(bytes),
    alg: ENVELOPE_ALG[algorithm],
    key_id: idOf(key),
    signature: base64url(sign(digestOf(algorithm), bytes, key)),
  };
}

/** A JWK Set entry as GET /.well-known/jwks.json publishes it. */
function jwkOf(key: KeyObject): Record<string, unknown> {
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  return jwk.kty === 'RSA'
    ? { kty: 'RSA', kid: idOf(key), alg: 'RS256', use: 'sig', n: jwk.n, e: jwk.e }
    : { kty: 'OKP', kid: idOf(key), alg: 'EdDSA', use: 'sig', crv: jwk.crv, x: jwk.x };
}

export function relayVectors(keys: RelayVectorKeys, license: Record<string, unknown>) {
  const relayKeyId = idOf(keys.relay);
  const pool = (vendor: KeyObject, poolId: string): Pool => ({
    pool_id: poolId,
    license: {
      ...license,
      machine_fingerprint: RELAY_FINGERPRINT,
      activated_at: '2026-01-31T08:00:00.000Z',
      signed_at: '2026-01-31T08:00:00.100Z',
      key_id: idOf(vendor),
    } as unknown as Pool['license'],
    seats: 3,
    relay_public_key: pemOf(keys.relay),
    relay_key_id: relayKeyId,
    issued_at: '2026-01-31T08:00:00.000Z',
    expires_at: '2026-03-02T08:00:00.000Z',
  });
  const valid = pool(keys.vendorRsa, '7d0f3a52-4c1e-4f7b-9a0e-2b8f6c1d5e34');
  const validFile = armorJson(POOL_FILE_LABEL, { pool: valid, envelope: envelopeBy(valid, keys.vendorRsa) });
  const ed = pool(keys.vendorEd25519, '1b9e7c44-0d2a-4e58-8f31-6a7c5d9e0b12');
  const forged = { ...valid, seats: 300 };
  const forgedEnvelope = { ...envelopeBy(valid, keys.vendorRsa), payload: base64url(canonicalBytes(forged)) };
  const lease = (expiresAt: string): Lease => ({
    lease_id: 'c3a1f0e2-5b7d-4a96-8e21-0f4d6b9a7c58',
    pool_id: valid.pool_id,
    machine_fingerprint: MACHINE,
    issued_at: '2026-02-01T08:58:00.000Z',
    expires_at: expiresAt,
    heartbeat_interval_seconds: 100,
  });
  const live = lease('2026-02-01T09:03:00.000Z');
  const expired = lease('2026-02-01T08:59:00.000Z');
  const answer = (l: Lease, envelope: SignedEnvelope) => ({ lease: l, envelope, pool_file: validFile });
  return {
    description:
      'Relay pool files and leases (docs/relay.md). Check a pool file with vendor_jwks: the armor, the envelope (section "Envelopes" of docs/signing.md), `pool` equal to the decoded payload as JSON; then a lease answer: its envelope with the pool\'s relay_public_key only, `lease` equal to its decoded payload, pool_id and machine_fingerprint, and expires_at after `now`. TEST KEYS ONLY.',
    now: NOW,
    vendor_jwks: { keys: [jwkOf(keys.vendorRsa), jwkOf(keys.vendorEd25519)] },
    relay_fingerprint: RELAY_FINGERPRINT,
    relay_public_key: pemOf(keys.relay),
    relay_key_id: relayKeyId,
    pools: [
      {
        name: 'pool-valid',
        description: "A pool of 3 seats signed by the vendor's RSA key (RS256).",
        pool_file: validFile,
        expect: { verdict: 'accept', reason: null },
      },
      {
        name: 'pool-valid-ed25519',
        description: "A pool signed by the vendor's Ed25519 key (EdDSA).",
        pool_file: armorJson(POOL_FILE_LABEL, { pool: ed, envelope: envelopeBy(ed, keys.vendorEd25519) }),
        expect: { verdict: 'accept', reason: null },
      },
      {
        name: 'pool-forged-signature',
        description: "The envelope's payload was changed (300 seats) and the signature kept: the signature does not verify.",
        pool_file: armorJson(POOL_FILE_LABEL, { pool: forged, envelope: forgedEnvelope }),
        expect: { verdict: 'refuse', reason: 'SIGNATURE_INVALID' },
      },
      {
        name: 'pool-signed-by-stranger',
        description: 'A well-formed pool signed by a key the vendor never published: unknown key.',
        pool_file: armorJson(POOL_FILE_LABEL, { pool: valid, envelope: envelopeBy(valid, keys.stranger) }),
        expect: { verdict: 'refuse', reason: 'SIGNATURE_INVALID' },
      },
      {
        name: 'pool-differs-from-payload',
        description:
          'The envelope verifies, but the readable `pool` beside it says 300 seats: refused, the pool must equal the decoded payload.',
        pool_file: armorJson(POOL_FILE_LABEL, { pool: forged, envelope: envelopeBy(valid, keys.vendorRsa) }),
        expect: { verdict: 'refuse', reason: 'POOL_MISMATCH' },
      },
    ],
    leases: [
      {
        name: 'lease-valid',
        description: 'A lease of pool-valid for `machine_fingerprint`, signed by the relay key, live at `now`.',
        machine_fingerprint: MACHINE,
        answer: answer(live, signLease(live, keys.relay, relayKeyId)),
        expect: { verdict: 'accept', reason: null },
      },
      {
        name: 'lease-signed-by-other-key',
        description:
          "The same lease signed by another Ed25519 key (named with the relay's key id): only the pool's relay key may sign leases.",
        machine_fingerprint: MACHINE,
        answer: answer(live, signLease(live, keys.stranger, relayKeyId)),
        expect: { verdict: 'refuse', reason: 'SIGNATURE_INVALID' },
      },
      {
        name: 'lease-for-other-machine',
        description: 'A valid lease, checked by a machine with another fingerprint.',
        machine_fingerprint: 'sha256:' + 'ab'.repeat(32),
        answer: answer(live, signLease(live, keys.relay, relayKeyId)),
        expect: { verdict: 'refuse', reason: 'LEASE_MISMATCH' },
      },
      {
        name: 'lease-expired',
        description: 'A correctly signed lease whose expires_at is before `now`.',
        machine_fingerprint: MACHINE,
        answer: answer(expired, signLease(expired, keys.relay, relayKeyId)),
        expect: { verdict: 'refuse', reason: 'LEASE_EXPIRED' },
      },
    ],
  };
}
