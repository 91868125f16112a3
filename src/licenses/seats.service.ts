import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { SYSTEM_ACTOR, type Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { ErrorCode } from '../common/errors/error-codes';
import { type Activation, CURRENT_SEAT_INDEX } from './activation.entity';
import type { License } from './license.entity';
import { mergeLimits, seatLimit } from './license-limits';
import { DEACTIVATION_WINDOW_DAYS, mergePolicy, SeatPolicy } from './license-policy';
import { deriveLicenseStatus, graceEndsAt, LicenseStatus, USABLE_STATUSES } from './license-status';
import { LicensesRepository } from './licenses.repository';
import { SeatCheckRow, SeatsRepository, SweptSeat } from './seats.repository';

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

/** A bound seat together with its licence (product loaded). */
export interface BoundSeat {
  license: License;
  seat: Activation;
  /** false when the fingerprint already held the seat (idempotent re-activation). */
  created: boolean;
}

export interface ReleasedSeat {
  license: License;
  /** The licence could be activated again right now (not revoked, suspended or expired). */
  canReactivate: boolean;
}

export interface HeartbeatResult {
  status: LicenseStatus;
  valid: boolean;
  code: ErrorCode | null;
  heartbeatTimeoutSeconds: number | null;
  /** last_seen_at + timeout: the seat dies if no heartbeat arrives before; null when seats never die. */
  nextHeartbeatBefore: Date | null;
}

/** Seats released by one sweep batch. */
export interface SweepResult {
  released: number;
}

export interface SeatCheck {
  license: SeatCheckRow['license'];
  status: LicenseStatus;
  graceEndsAt: Date | null;
  valid: boolean;
  code: ErrorCode | null;
}

const STATUS_DENIALS: Partial<Record<LicenseStatus, { code: ErrorCode; message: string }>> = {
  revoked: { code: ErrorCode.KEY_REVOKED, message: 'The licence was revoked' },
  suspended: { code: ErrorCode.KEY_SUSPENDED, message: 'The licence is suspended' },
  expired: { code: ErrorCode.KEY_EXPIRED, message: 'The licence has expired' },
};

const invalidKey = () => new AppError(ErrorCode.INVALID_KEY, 400, 'The licence key does not exist');

/**
 * Seat (activation record) use cases the client API builds on: bind, release and check machines.
 * Every change locks the licence row first, so counting seats and inserting one cannot interleave
 * with another change of the same licence, and writes its audit entry in the same transaction.
 */
@Injectable()
export class SeatsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
    private readonly audit: AuditService,
  ) {}

  /**
   * Binds the machine to the licence, or refreshes its existing seat. Checks in CONTRACT 4 order:
   * INVALID_KEY > PRODUCT_MISMATCH > KEY_REVOKED > KEY_SUSPENDED > KEY_EXPIRED > ALREADY_ACTIVATED.
   * A denial commits only its audit entry, then is thrown.
   */
  async activateSeat(request: ActivationRequest, actor: Actor): Promise<BoundSeat> {
    try {
      return await this.activateOnce(request, actor);
    } catch (err) {
      // The licence lock makes this unreachable for client activations; a seat inserted by another path
      // at the same moment would surface here, and a second attempt sees it as the machine's own seat.
      if (uniqueViolation(err) !== CURRENT_SEAT_INDEX) throw err;
      return this.activateOnce(request, actor);
    }
  }

  private async activateOnce(request: ActivationRequest, actor: Actor): Promise<BoundSeat> {
    const outcome = await this.dataSource.transaction(async (manager): Promise<BoundSeat | AppError> => {
      const license = await this.licenses.lockByKey(request.licenseKey, manager);
      let current: Activation[] = [];
      let denial = license ? this.activationDenial(license, request) : invalidKey();
      if (!denial) {
        // Dead seats go first, in this transaction, so a new machine never waits for the sweep.
        await this.releaseDeadSeats(license as License, manager);
        current = await this.seats.listCurrent((license as License).id, manager);
        denial = this.seatsFull(license as License, request, current);
      }
      if (denial) {
        await this.audit.record(
          {
            action: 'license.activation_denied',
            actor,
            licenseId: license?.id ?? null,
            productCode: license?.product?.code ?? null,
            details: { code: denial.code, machine_fingerprint: request.machineFingerprint, hostname: request.hostname, ip: actor.ip },
          },
          manager,
        );
        return denial;
      }
      return this.bind(license as License, request, current, actor, manager);
    });
    if (outcome instanceof AppError) throw outcome;
    return outcome;
  }

  /** The checks that need no seat count, in CONTRACT order. */
  private activationDenial(license: License, request: ActivationRequest): AppError | undefined {
    const productCode = license.product?.code;
    if (request.product != null && request.product !== productCode) {
      return new AppError(ErrorCode.PRODUCT_MISMATCH, 400, 'The licence belongs to another product', {
        expected: request.product,
        license_product: productCode,
      });
    }
    const denial = STATUS_DENIALS[deriveLicenseStatus(license)];
    return denial && new AppError(denial.code, 400, denial.message);
  }

  /** ALREADY_ACTIVATED when every seat is held by other machines; the machine's own seat never counts against it. */
  private seatsFull(license: License, request: ActivationRequest, current: Activation[]): AppError | undefined {
    if (current.some((s) => s.machineFingerprint === request.machineFingerprint)) return undefined;
    const limit = seatLimit(mergeLimits(license.product?.defaultLimits ?? {}, license.limits));
    if (current.length < limit) return undefined;
    const latest = current[0];
    return new AppError(ErrorCode.ALREADY_ACTIVATED, 400, 'The licence is already activated on another machine', {
      activated_on: latest?.hostname ?? null,
      activated_at: latest?.activatedAt.toISOString() ?? null,
      max_installations: limit,
    });
  }

  /** `current`: the licence's current seats, read under its lock. */
  private async bind(
    license: License,
    request: ActivationRequest,
    current: Activation[],
    actor: Actor,
    manager: EntityManager,
  ): Promise<BoundSeat> {
    const reported = { hostname: request.hostname, os: request.os ?? null, appVersion: request.appVersion ?? null, ip: actor.ip };
    const existing = current.find((s) => s.machineFingerprint === request.machineFingerprint);
    const now = new Date();
    const seat = existing
      ? await this.seats.refresh(existing.id, reported, manager)
      : await this.seats.insert(
          {
            licenseId: license.id,
            productId: license.productId,
            machineFingerprint: request.machineFingerprint,
            ...reported,
            activatedAt: now,
            lastSeenAt: now,
          },
          manager,
        );
    await this.audit.record(
      {
        action: 'license.activated',
        actor,
        licenseId: license.id,
        productCode: license.product?.code ?? null,
        details: {
          machine_fingerprint: request.machineFingerprint,
          hostname: request.hostname,
          os: reported.os,
          app_version: reported.appVersion,
          seat_id: Number(seat.id),
          reactivation: Boolean(existing),
        },
      },
      manager,
    );
    return { license, seat, created: !existing };
  }

  /**
   * Releases the machine's seat (`deactivated`). INVALID_KEY, or NOT_ACTIVATED when it holds none (a dead seat
   * is none), or DEACTIVATION_LIMIT_REACHED beyond the policy's max_deactivations_per_30_days: counted under the
   * licence lock, which every seat change of the licence takes, so parallel attempts cannot all slip under it.
   */
  async deactivateSeat(request: SeatRequest, actor: Actor): Promise<ReleasedSeat> {
    const outcome = await this.dataSource.transaction(async (manager): Promise<ReleasedSeat | AppError> => {
      const license = await this.licenses.lockByKey(request.licenseKey, manager);
      if (!license) throw invalidKey();
      // A dead seat's release commits even when this request is then refused (it was dead either way).
      await this.releaseDeadSeats(license, manager);
      if (!(await this.seats.findCurrent(license.id, request.machineFingerprint, manager))) {
        return new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence');
      }
      const limitReached = await this.deactivationLimitReached(license, manager);
      if (limitReached) return limitReached;
      const released = await this.seats.release(license.id, request.machineFingerprint, 'deactivated', manager);
      await this.audit.record(
        {
          action: 'license.deactivated',
          actor,
          licenseId: license.id,
          productCode: license.product?.code ?? null,
          details: { machine_fingerprint: request.machineFingerprint, seat_id: Number(released[0].id) },
        },
        manager,
      );
      return { license, canReactivate: USABLE_STATUSES.includes(deriveLicenseStatus(license)) };
    });
    if (outcome instanceof AppError) throw outcome;
    return outcome;
  }

  /** DEACTIVATION_LIMIT_REACHED when the licence's client deactivations in the last 30 days reached its limit. */
  private async deactivationLimitReached(license: License, manager: EntityManager): Promise<AppError | undefined> {
    const limit = this.policyOf(license).max_deactivations_per_30_days;
    if (limit === null) return undefined;
    const recent = await this.seats.recentDeactivations(license.id, DEACTIVATION_WINDOW_DAYS, manager);
    if (recent.length < limit) return undefined;
    // Allowed again once enough of them have left the window; never with a limit of 0.
    const freeing = recent[recent.length - limit];
    const nextAllowedAt = limit === 0 || !freeing ? null : new Date(freeing.getTime() + DEACTIVATION_WINDOW_DAYS * 86_400_000);
    return new AppError(
      ErrorCode.DEACTIVATION_LIMIT_REACHED,
      400,
      `This licence may be deactivated at most ${limit} time${limit === 1 ? '' : 's'} in 30 days`,
      {
        max_deactivations_per_30_days: limit,
        deactivations_last_30_days: recent.length,
        next_allowed_at: nextAllowedAt?.toISOString() ?? null,
      },
    );
  }

  private policyOf(license: License): SeatPolicy {
    return mergePolicy(license.product?.defaultPolicy, license.policy);
  }

  /** Releases the licence's dead seats (`heartbeat_timeout`, audited as the system); the caller holds the licence lock. */
  private async releaseDeadSeats(license: License, manager: EntityManager): Promise<void> {
    const timeout = this.policyOf(license).heartbeat_timeout_seconds;
    if (timeout === null) return;
    const released = await this.seats.releaseDead(license.id, timeout, manager);
    if (released.length === 0) return;
    await this.recordHeartbeatRelease(
      license.id,
      license.product?.code ?? null,
      released.map((s) => ({ id: s.id, machineFingerprint: s.machineFingerprint, lastSeenAt: s.lastSeenAt })),
      manager,
    );
  }

  private async recordHeartbeatRelease(
    licenseId: number,
    productCode: string | null,
    seats: { id: string; machineFingerprint: string; lastSeenAt: Date }[],
    manager: EntityManager,
  ): Promise<void> {
    await this.audit.record(
      {
        action: 'license.released',
        actor: SYSTEM_ACTOR,
        licenseId,
        productCode,
        details: {
          machine_fingerprints: seats.map((s) => s.machineFingerprint),
          released: seats.length,
          reason: 'heartbeat_timeout',
          seat_ids: seats.map((s) => Number(s.id)),
          last_seen_at: seats.map((s) => s.lastSeenAt.toISOString()),
        },
      },
      manager,
    );
  }

  /**
   * One sweep batch: releases up to `batch` dead seats of any licences and audits them per licence, in one
   * transaction. Safe with several instances at once (see SeatsRepository.sweepDead).
   */
  async sweepDeadSeats(batch: number): Promise<SweepResult> {
    return this.dataSource.transaction(async (manager) => {
      const swept = await this.seats.sweepDead(batch, manager);
      const byLicence = new Map<number, SweptSeat[]>();
      for (const seat of swept) byLicence.set(seat.license_id, [...(byLicence.get(seat.license_id) ?? []), seat]);
      for (const [licenseId, seats] of byLicence) {
        await this.recordHeartbeatRelease(
          licenseId,
          seats[0].product_code,
          seats.map((s) => ({ id: s.id, machineFingerprint: s.machine_fingerprint, lastSeenAt: s.last_seen_at })),
          manager,
        );
      }
      return { released: swept.length };
    });
  }

  /**
   * A client's heartbeat (CONTRACT 9): refreshes the machine's live seat every time. INVALID_KEY for an unknown
   * key, NOT_ACTIVATED (400) when the machine holds no live seat; otherwise the licence's status as validate sees it.
   */
  async heartbeat(request: SeatRequest): Promise<HeartbeatResult> {
    const row = await this.seats.heartbeat(request.licenseKey, request.machineFingerprint);
    if (!row) throw invalidKey();
    if (row.seat_id === null || row.last_seen_at === null) {
      throw new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence; activate it again');
    }
    const status = deriveLicenseStatus({ expiresAt: row.expires_at, graceDays: row.grace_days, active: row.active, revoked: row.revoked });
    const code = STATUS_DENIALS[status]?.code ?? null;
    const timeout = row.heartbeat_timeout_seconds;
    return {
      status,
      valid: code === null,
      code,
      heartbeatTimeoutSeconds: timeout,
      nextHeartbeatBefore: timeout === null ? null : new Date(row.last_seen_at.getTime() + timeout * 1000),
    };
  }

  /** Whether the licence with this key belongs to one of `products` (false for an unknown key). */
  async licenseInProducts(licenseKey: string, products: readonly number[]): Promise<boolean> {
    const license = await this.licenses.getByKey(licenseKey);
    return license !== null && products.includes(license.productId);
  }

  /**
   * A machine's current seat with its licence (product loaded), for a licence file: the codes of validation when
   * there is none (INVALID_KEY; KEY_REVOKED, KEY_SUSPENDED, KEY_EXPIRED before NOT_ACTIVATED, as validate orders them).
   */
  async boundSeat(request: SeatRequest): Promise<BoundSeat> {
    const license = await this.licenses.getByKey(request.licenseKey);
    if (!license) throw invalidKey();
    const denial = STATUS_DENIALS[deriveLicenseStatus(license)];
    if (denial) throw new AppError(denial.code, 400, denial.message);
    const seat = (await this.seats.listCurrent(license.id)).find((s) => s.machineFingerprint === request.machineFingerprint);
    if (!seat) throw new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence');
    return { license, seat, created: false };
  }

  /**
   * The online check: valid when the licence is active or in grace and the machine holds a seat.
   * A valid check refreshes the seat's last_seen_at, at most once per `lastSeenIntervalSeconds`.
   */
  async checkSeat(request: SeatRequest, lastSeenIntervalSeconds: number): Promise<SeatCheck> {
    const found = await this.seats.findForCheck(request.licenseKey, request.machineFingerprint, lastSeenIntervalSeconds);
    if (!found) throw invalidKey();
    const { license, seat } = found;
    const now = new Date();
    const status = deriveLicenseStatus(license, now);
    const code = STATUS_DENIALS[status]?.code ?? (seat ? null : ErrorCode.NOT_ACTIVATED);
    // Only a stale seat costs the write (and its round trip); the UPDATE checks staleness again.
    if (code === null && seat?.stale) await this.seats.touchLastSeen(seat.id, lastSeenIntervalSeconds);
    return { license, status, graceEndsAt: graceEndsAt(license), valid: code === null, code };
  }
}
