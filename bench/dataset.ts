import { createHash } from 'node:crypto';

/**
 * How the benchmark's synthetic data is derived from a sequence number `n`, in SQL (for bulk
 * seeding on the server side) and in TypeScript (for building request bodies), so both agree
 * without shipping a million keys between them.
 */

/** Licence n's key: PREFIX-XXXXX-XXXXX-XXXXX-XXXXX from md5 hex (upper-case hex is valid Crockford base32). */
export function licenseKeyOf(prefix: string, n: number): string {
  const h = createHash('md5').update(`licence:${n}`).digest('hex').toUpperCase();
  return `${prefix}-${h.slice(0, 5)}-${h.slice(5, 10)}-${h.slice(10, 15)}-${h.slice(15, 20)}`;
}

export function licenseKeySql(prefix: string, n: string): string {
  const h = `upper(md5('licence:' || ${n}))`;
  return `${prefix} || '-' || substr(${h}, 1, 5) || '-' || substr(${h}, 6, 5) || '-' || substr(${h}, 11, 5) || '-' || substr(${h}, 16, 5)`;
}

/** The machine bound to licence n. */
export function fingerprintOf(n: number): string {
  return `sha256:${createHash('sha256').update(`machine:${n}`).digest('hex')}`;
}

export function fingerprintSql(n: string): string {
  return `'sha256:' || encode(sha256(convert_to('machine:' || ${n}, 'UTF8')), 'hex')`;
}

/**
 * Licence n's type is LICENSE_TYPES_BY_N[n % 5]. Every 10th licence is PERPETUAL, active and
 * not revoked, and holds one seat: those are the licences validate and re-activation use.
 */
export const LICENSE_TYPES_BY_N = ['PERPETUAL', 'TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY'] as const;
export const SEAT_EVERY = 10;

/** Fresh-activation licences get sequence numbers far above any seeded licence's. */
export const FRESH_POOL_BASE = 100_000_000;
