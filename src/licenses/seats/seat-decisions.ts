import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import type { Activation } from './activation.entity';
import type { License } from '../license.entity';
import { isSeatDead, mergeLimits, seatLimit } from '../license-limits';
import { DEACTIVATION_WINDOW_DAYS, mergePolicy } from '../../common/seat-policy/license-policy';
import { deriveLicenseStatus, graceEndsAt, LicenseStatus, StatusFields, USABLE_STATUSES } from '../license-status';

/**
 * The seat rules as pure functions of the licence, its seats, the request and the time (docs/licences.md, Seats and
 * machines): the use cases load once, decide here, write once. Every check and its order: docs/client-api.md, Activate; Deactivate; Validate; Heartbeat.
 */

export interface SeatRequest {
  /** Already normalised (trimmed, upper-cased). */
  licenseKey: string;
  /** Already normalised (lower-case hex). */
  machineFingerprint: string;
}

export interface ActivationRequest extends SeatRequest {
  hostname: string;
  os?: string | null;
  appVersion?: string | null;
  /** Product code the client application belongs to; checked when given. */
  product?: string | null;
}

const STATUS_DENIALS: Partial<Record<LicenseStatus, { code: ErrorCode; message: string }>> = {
  revoked: { code: ErrorCode.KEY_REVOKED, message: 'The licence was revoked' },
  suspended: { code: ErrorCode.KEY_SUSPENDED, message: 'The licence is suspended' },
  expired: { code: ErrorCode.KEY_EXPIRED, message: 'The licence has expired' },
};

export const invalidKey = () => new AppError(ErrorCode.INVALID_KEY, 400, 'The licence key does not exist');

/** KEY_REVOKED, KEY_SUSPENDED or KEY_EXPIRED for a status no client may use, else undefined. */
export function statusDenial(status: LicenseStatus): AppError | undefined {
  const denial = STATUS_DENIALS[status];
  return denial && new AppError(denial.code, 400, denial.message);
}

/** The licence's seats silent for longer than its heartbeat timeout at `now` (none when seats never die). */
export function deadSeats(license: License, seats: readonly Activation[], now: Date): Activation[] {
  const timeout = mergePolicy(license.product?.defaultPolicy, license.policy).heartbeat_timeout_seconds;
  if (timeout === null) return [];
  return seats.filter((s) => isSeatDead(s.lastSeenAt, timeout, now));
}

export type ActivationDecision =
  /** Refused: `release` are dead seats to release anyway (they were dead either way). */
  | { kind: 'deny'; error: AppError; release: Activation[] }
  /** The machine holds a live seat: refresh it, nothing else happened. */
  | { kind: 'refresh'; seat: Activation; release: Activation[] }
  /** A new seat for the machine; `live` are the licence's other seats that stay. */
  | { kind: 'bind'; live: Activation[]; release: Activation[] };

/**
 * docs/client-api.md, Activate: first failure wins, INVALID_KEY > PRODUCT_MISMATCH > KEY_REVOKED > KEY_SUSPENDED > KEY_EXPIRED >
 * ALREADY_ACTIVATED. Dead seats are released once the licence is usable, before seats are counted (docs/licences.md, Heartbeats and dead seats).
 * `seats`: the licence's current seats, most recent binding first. `pooledSeats`: seats held by the licence's valid
 * relay pools (docs/relay.md, Seats on the vendor's side), taken like bound seats.
 */
export function decideActivation(
  license: License | null,
  seats: readonly Activation[],
  request: ActivationRequest,
  now: Date,
  pooledSeats = 0,
): ActivationDecision {
  if (!license) return { kind: 'deny', error: invalidKey(), release: [] };
  const productCode = license.product?.code;
  if (request.product != null && request.product !== productCode) {
    const error = new AppError(ErrorCode.PRODUCT_MISMATCH, 400, 'The licence belongs to another product', {
      expected: request.product,
      license_product: productCode,
    });
    return { kind: 'deny', error, release: [] };
  }
  const denial = statusDenial(deriveLicenseStatus(license, now));
  if (denial) return { kind: 'deny', error: denial, release: [] };
  const release = deadSeats(license, seats, now);
  const live = seats.filter((s) => !release.includes(s));
  const own = live.find((s) => s.machineFingerprint === request.machineFingerprint);
  if (own) return { kind: 'refresh', seat: own, release };
  const limit = seatLimit(mergeLimits(license.product?.defaultLimits ?? {}, license.limits));
  if (live.length + pooledSeats >= limit) {
    const latest = live[0];
    const error = new AppError(ErrorCode.ALREADY_ACTIVATED, 400, 'The licence is already activated on another machine', {
      activated_on: latest?.hostname ?? null,
      activated_at: latest?.activatedAt.toISOString() ?? null,
      max_installations: limit,
      ...(pooledSeats > 0 ? { relay_pool_seats: pooledSeats } : {}),
    });
    return { kind: 'deny', error, release };
  }
  return { kind: 'bind', live, release };
}

export type DeactivationDecision =
  | { kind: 'deny'; error: AppError; release: Activation[] }
  | { kind: 'release'; seat: Activation; live: Activation[]; release: Activation[]; canReactivate: boolean };

/**
 * INVALID_KEY > NOT_ACTIVATED (no live seat for the machine; a dead seat is none) > DEACTIVATION_LIMIT_REACHED (the
 * licence's client deactivations within the last 30 days reached max_deactivations_per_30_days). Dead seats are
 * released whatever the answer. `recentDeactivations`: release times of client deactivations, oldest first.
 */
export function decideDeactivation(
  license: License | null,
  seats: readonly Activation[],
  recentDeactivations: readonly Date[],
  request: SeatRequest,
  now: Date,
): DeactivationDecision {
  if (!license) return { kind: 'deny', error: invalidKey(), release: [] };
  const release = deadSeats(license, seats, now);
  const live = seats.filter((s) => !release.includes(s));
  const own = live.find((s) => s.machineFingerprint === request.machineFingerprint);
  if (!own)
    return { kind: 'deny', error: new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence'), release };
  const limit = mergePolicy(license.product?.defaultPolicy, license.policy).max_deactivations_per_30_days;
  const windowStart = now.getTime() - DEACTIVATION_WINDOW_DAYS * 86_400_000;
  const recent = recentDeactivations.filter((d) => d.getTime() > windowStart);
  if (limit !== null && recent.length >= limit) {
    // Allowed again once enough of them have left the window; never with a limit of 0.
    const freeing = recent[recent.length - limit];
    const nextAllowedAt = limit === 0 || !freeing ? null : new Date(freeing.getTime() + DEACTIVATION_WINDOW_DAYS * 86_400_000);
    const error = new AppError(
      ErrorCode.DEACTIVATION_LIMIT_REACHED,
      400,
      `This licence may be deactivated at most ${limit} time${limit === 1 ? '' : 's'} in 30 days`,
      {
        max_deactivations_per_30_days: limit,
        deactivations_last_30_days: recent.length,
        next_allowed_at: nextAllowedAt?.toISOString() ?? null,
      },
    );
    return { kind: 'deny', error, release };
  }
  const canReactivate = USABLE_STATUSES.includes(deriveLicenseStatus(license, now));
  return { kind: 'release', seat: own, live: live.filter((s) => s !== own), release, canReactivate };
}

export interface ValidationDecision {
  status: LicenseStatus;
  graceEndsAt: Date | null;
  valid: boolean;
  code: ErrorCode | null;
  /** Refresh the seat's last_seen_at: a valid check of a seat not seen within the interval. */
  touch: boolean;
}

/**
 * The online check (docs/client-api.md, Validate): INVALID_KEY for an unknown licence (thrown by the caller); else the status codes
 * (KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED) before NOT_ACTIVATED (no live seat for the machine).
 */
export function decideValidation(license: StatusFields, seat: { stale: boolean } | null, now: Date): ValidationDecision {
  const status = deriveLicenseStatus(license, now);
  const code = statusDenial(status)?.code ?? (seat ? null : ErrorCode.NOT_ACTIVATED);
  return { status, graceEndsAt: graceEndsAt(license), valid: code === null, code, touch: code === null && seat?.stale === true };
}

export interface HeartbeatDecision {
  status: LicenseStatus;
  valid: boolean;
  code: ErrorCode | null;
  heartbeatTimeoutSeconds: number | null;
  /** last_seen_at + timeout: the seat dies if no heartbeat arrives before; null when seats never die. */
  nextHeartbeatBefore: Date | null;
}

/**
 * A heartbeat (docs/client-api.md, Heartbeat), once its seat was refreshed: INVALID_KEY (no licence) > NOT_ACTIVATED (no live seat was
 * refreshed); otherwise the licence's status as validate sees it. `seenAt`: the refreshed seat's last_seen_at.
 */
export function decideHeartbeat(
  license: (StatusFields & { heartbeatTimeoutSeconds: number | null }) | null,
  seenAt: Date | null,
  now: Date,
): HeartbeatDecision | AppError {
  if (!license) return invalidKey();
  if (seenAt === null) return new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence; activate it again');
  const status = deriveLicenseStatus(license, now);
  const code = statusDenial(status)?.code ?? null;
  const timeout = license.heartbeatTimeoutSeconds;
  return {
    status,
    valid: code === null,
    code,
    heartbeatTimeoutSeconds: timeout,
    nextHeartbeatBefore: timeout === null ? null : new Date(seenAt.getTime() + timeout * 1000),
  };
}
