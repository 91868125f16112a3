import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { ErrorCode } from '../common/errors/error-codes';
import { type Activation, CURRENT_SEAT_INDEX } from './activation.entity';
import type { License } from './license.entity';
import { mergeLimits, seatLimit } from './license-limits';
import { deriveLicenseStatus, graceEndsAt, LicenseStatus, USABLE_STATUSES } from './license-status';
import { LicensesRepository } from './licenses.repository';
import { SeatCheckRow, SeatsRepository } from './seats.repository';

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
          { licenseId: license.id, machineFingerprint: request.machineFingerprint, ...reported, activatedAt: now, lastSeenAt: now },
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

  /** Releases the machine's seat (`deactivated`). INVALID_KEY, or NOT_ACTIVATED when it holds none. */
  async deactivateSeat(request: SeatRequest, actor: Actor): Promise<ReleasedSeat> {
    return this.dataSource.transaction(async (manager) => {
      const license = await this.licenses.lockByKey(request.licenseKey, manager);
      if (!license) throw invalidKey();
      const released = await this.seats.release(license.id, request.machineFingerprint, 'deactivated', manager);
      if (released.length === 0) {
        throw new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence');
      }
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
