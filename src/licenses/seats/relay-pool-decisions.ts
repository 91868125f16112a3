import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import type { Activation } from './activation.entity';
import type { License } from '../license.entity';
import { mergeLimits, seatLimit } from '../license-limits';
import { deriveLicenseStatus, graceEndsAt } from '../license-status';
import { deadSeats, invalidKey, statusDenial } from './seat-decisions';

const DAY_MS = 86_400_000;

export type RelayPoolDecision = { kind: 'deny'; error: AppError } | { kind: 'hold'; expiresAt: Date };

/**
 * A relay pool request (docs/relay.md, Seats on the vendor's side), checked like an activation: INVALID_KEY >
 * KEY_REVOKED > KEY_SUSPENDED > KEY_EXPIRED > ACTIVATION_LIMIT_REACHED (fewer than `requested` seats free, counting
 * bound live seats and the seats of the licence's other valid pools, `pooledSeats`). The pool lasts `ttlDays`, never
 * past the end of the licence's grace period.
 */
export function decideRelayPool(
  license: License | null,
  seats: readonly Activation[],
  pooledSeats: number,
  requested: number,
  ttlDays: number,
  now: Date,
): RelayPoolDecision {
  if (!license) return { kind: 'deny', error: invalidKey() };
  const denial = statusDenial(deriveLicenseStatus(license, now));
  if (denial) return { kind: 'deny', error: denial };
  const dead = deadSeats(license, seats, now);
  const bound = seats.length - dead.length;
  const limit = seatLimit(mergeLimits(license.product?.defaultLimits ?? {}, license.limits));
  const available = Math.max(0, limit - bound - pooledSeats);
  if (requested > available) {
    const error = new AppError(
      ErrorCode.ACTIVATION_LIMIT_REACHED,
      400,
      `The licence has ${available} free seat${available === 1 ? '' : 's'}; the pool asks for ${requested}`,
      { requested, available, max_installations: limit },
    );
    return { kind: 'deny', error };
  }
  const wanted = new Date(now.getTime() + ttlDays * DAY_MS);
  const graceEnd = graceEndsAt(license);
  return { kind: 'hold', expiresAt: graceEnd && graceEnd < wanted ? graceEnd : wanted };
}
