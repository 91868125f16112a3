import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VerifyingKey } from '../signing/envelope';
import { keyIdOf } from '../signing/license-signature';
import { armorJson, checkPoolFor, dearmorJson, POOL_REQUEST_LABEL, verifyLease, verifyPoolFile } from './pool-file';

interface RelayVectors {
  now: string;
  vendor_jwks: { keys: Record<string, unknown>[] };
  relay_fingerprint: string;
  relay_key_id: string;
  pools: { name: string; pool_file: string; expect: { verdict: string; reason: string | null } }[];
  leases: {
    name: string;
    machine_fingerprint: string;
    answer: { lease: unknown; envelope: unknown };
    expect: { verdict: string; reason: string | null };
  }[];
}

const vectors = JSON.parse(readFileSync(join(__dirname, '..', '..', 'docs', 'test-vectors', 'relay.json'), 'utf8')) as RelayVectors;
const vendorKeys = new Map<string, VerifyingKey>(
  vectors.vendor_jwks.keys.map((jwk) => [jwk.kid as string, { key: createPublicKey({ key: jwk as never, format: 'jwk' }) }]),
);
const keyFor = (id: string) => vendorKeys.get(id);

/** docs/test-vectors/relay.json must stay true for the relay's own checks, or client authors check against lies. */
describe('relay pool files and leases (docs/test-vectors/relay.json)', () => {
  it.each(vectors.pools)('pool vector $name: $expect.verdict', ({ pool_file, expect: expected }) => {
    const verdict = verifyPoolFile(pool_file, keyFor);
    expect(verdict.ok ? { verdict: 'accept', reason: null } : { verdict: 'refuse', reason: verdict.reason }).toEqual(expected);
  });

  it.each(vectors.leases)('lease vector $name: $expect.verdict', ({ machine_fingerprint, answer, expect: expected }) => {
    const pool = verifyPoolFile(vectors.pools[0].pool_file, keyFor);
    if (!pool.ok) throw new Error(pool.message);
    const verdict = verifyLease(answer, pool.value.pool, machine_fingerprint, new Date(vectors.now));
    expect(verdict.ok ? { verdict: 'accept', reason: null } : { verdict: 'refuse', reason: verdict.reason }).toEqual(expected);
  });

  it('refuses a pool for another machine, another relay key, or past its expiry', () => {
    const pool = verifyPoolFile(vectors.pools[0].pool_file, keyFor);
    if (!pool.ok) throw new Error(pool.message);
    const now = new Date(vectors.now);
    const other = keyIdOf(generateKeyPairSync('ed25519').publicKey);
    expect(checkPoolFor(pool.value.pool, vectors.relay_fingerprint, vectors.relay_key_id, now).ok).toBe(true);
    expect(checkPoolFor(pool.value.pool, 'sha256:' + '1'.repeat(64), vectors.relay_key_id, now)).toMatchObject({ reason: 'WRONG_MACHINE' });
    expect(checkPoolFor(pool.value.pool, vectors.relay_fingerprint, other, now)).toMatchObject({ reason: 'WRONG_RELAY_KEY' });
    const later = new Date(Date.parse(pool.value.pool.expires_at) + 1);
    expect(checkPoolFor(pool.value.pool, vectors.relay_fingerprint, vectors.relay_key_id, later)).toMatchObject({ reason: 'POOL_EXPIRED' });
  });

  it('reads its armor strictly and round-trips it', () => {
    const text = armorJson(POOL_REQUEST_LABEL, { seats: 2 });
    expect(dearmorJson(POOL_REQUEST_LABEL, `\uFEFF\r\n${text.replace(/\n/g, '\r\n')}\r\n`)).toEqual({ ok: true, value: { seats: 2 } });
    expect(dearmorJson('RELAY POOL', text).ok).toBe(false);
    expect(dearmorJson(POOL_REQUEST_LABEL, text.replace(/\n[A-Za-z0-9+/=]+\n/, '\n!!!!\n')).ok).toBe(false);
    expect(dearmorJson(POOL_REQUEST_LABEL, armorJson(POOL_REQUEST_LABEL, [1])).ok).toBe(false);
    expect(dearmorJson(POOL_REQUEST_LABEL, 42).ok).toBe(false);
  });
});
