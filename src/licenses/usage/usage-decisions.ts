import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import type { SeatPolicy } from '../../common/seat-policy/license-policy';
import { deriveLicenseStatus, StatusFields } from '../license-status';
import { invalidKey, statusDenial } from '../seats/seat-decisions';

/**
 * The usage meter's rules as pure functions of the licence, the machine's seat, the request and the time
 * (docs/licences.md, Usage metering). The count itself is one atomic statement (UsageRepository.increment).
 */

/** A counter as stored: the start of its period and the uses counted in it. */
export interface StoredUsage {
  periodStart: Date;
  uses: number;
}

/** The period a count belongs to: a UTC calendar month, or the licence's whole life (end null). */
export interface UsagePeriod {
  start: Date;
  end: Date | null;
}

/** The answer of POST /api/v1/usage and the usage in admin views: every field null when the licence is not metered. */
export interface UsageAnswer {
  uses: number | null;
  max_uses: number | null;
  remaining: number | null;
  period_start: string | null;
  period_end: string | null;
}

export const NOT_METERED: UsageAnswer = { uses: null, max_uses: null, remaining: null, period_start: null, period_end: null };

/** The licence fields the meter needs. */
export interface MeteredLicense extends StatusFields {
  createdAt: Date;
  policy: Pick<SeatPolicy, 'max_uses' | 'uses_period'>;
}

/** `month`: [start of the UTC month of `now`, start of the next); `none`: from the licence's creation, no end. */
export function usagePeriod(policy: Pick<SeatPolicy, 'uses_period'>, createdAt: Date, now: Date): UsagePeriod {
  if (policy.uses_period !== 'month') return { start: createdAt, end: null };
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
}

/** The uses of `period`: the newest counter's, when it is that period's (an older period's count does not carry over). */
export function usesIn(period: UsagePeriod, latest: StoredUsage | null): number {
  return latest && latest.periodStart.getTime() === period.start.getTime() ? latest.uses : 0;
}

export function usageAnswer(maxUses: number, uses: number, period: UsagePeriod): UsageAnswer {
  return {
    uses,
    max_uses: maxUses,
    remaining: Math.max(0, maxUses - uses),
    period_start: period.start.toISOString(),
    period_end: period.end?.toISOString() ?? null,
  };
}

/** What validate shows of the meter: this period's uses and the cap, both null when not metered. */
export function usageSummary(
  license: MeteredLicense,
  latest: StoredUsage | null,
  now: Date,
): { uses: number | null; max_uses: number | null } {
  const max = license.policy.max_uses;
  if (max === null) return { uses: null, max_uses: null };
  return { uses: usesIn(usagePeriod(license.policy, license.createdAt, now), latest), max_uses: max };
}

export type UsageDecision =
  | { kind: 'deny'; error: AppError }
  /** Not metered: nothing is counted, the answer is all nulls. */
  | { kind: 'unmetered' }
  /** Count `increment` into `period`, never past `maxUses`. */
  | { kind: 'count'; period: UsagePeriod; maxUses: number };

/**
 * docs/client-api.md, Usage: the codes of validate first (INVALID_KEY > KEY_REVOKED > KEY_SUSPENDED > KEY_EXPIRED >
 * NOT_ACTIVATED, all 400: only a machine holding a seat of a usable licence counts), then the meter.
 */
export function decideUsage(license: MeteredLicense | null, seat: object | null, now: Date): UsageDecision {
  if (!license) return { kind: 'deny', error: invalidKey() };
  const denial = statusDenial(deriveLicenseStatus(license, now));
  if (denial) return { kind: 'deny', error: denial };
  if (!seat) return { kind: 'deny', error: new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence') };
  const max = license.policy.max_uses;
  if (max === null) return { kind: 'unmetered' };
  return { kind: 'count', period: usagePeriod(license.policy, license.createdAt, now), maxUses: max };
}

/** USAGE_LIMIT_REACHED (403) for an increment that would pass the cap; it counted nothing. */
export function usageLimitReached(maxUses: number, uses: number, increment: number): AppError {
  return new AppError(ErrorCode.USAGE_LIMIT_REACHED, 403, `This increment would pass the licence's ${maxUses} uses of this period`, {
    max_uses: maxUses,
    uses,
    remaining: Math.max(0, maxUses - uses),
    increment,
  });
}
