import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { DomainEvent, EventRecorder } from '../../events/event-recorder';
import { SYSTEM_ACTOR, type Actor } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { uniqueViolation } from '../../common/errors/database-errors';
import { ErrorCode } from '../../common/errors/error-codes';
import { Activation, CURRENT_SEAT_INDEX } from './activation.entity';
import type { License } from '../license.entity';
import { deriveLicenseStatus, LicenseStatus } from '../license-status';
import { toLicenseDetails } from '../licenses.service';
import { licenseEvent } from '../license-details';
import { LicensesRepository } from '../licenses.repository';
import {
  type ActivationRequest,
  deadSeats,
  decideActivation,
  decideDeactivation,
  decideHeartbeat,
  decideValidation,
  invalidKey,
  type SeatRequest,
  statusDenial,
} from './seat-decisions';
import {
  ActivationRow,
  type SeatChangeLoad,
  SeatCheckRow,
  seatChanges,
  SeatsRepository,
  seatsFromRows,
  SweptSeat,
} from './seats.repository';

export type { ActivationRequest, SeatRequest } from './seat-decisions';

/** A bound seat together with its licence (product loaded). */
export interface BoundSeat {
  license: License;
  seat: Activation;
  /** false when the fingerprint already held the seat (idempotent re-activation). */
  created: boolean;
  /** The licence's current seats after the change, most recent binding first. */
  seats: Activation[];
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
  latestUsage: SeatCheckRow['latestUsage'];
  status: LicenseStatus;
  graceEndsAt: Date | null;
  valid: boolean;
  code: ErrorCode | null;
}

/**
 * Seat (activation record) use cases the client API builds on: bind, release and check machines. A change loads
 * once (with its product and seats), decides with a pure function (seat-decisions.ts), and writes the change and its
 * events in one statement. An activation reads without a lock and writes only if the licence is still as read (two
 * round trips); every other change, and an activation whose read went stale, locks the licence: BEGIN, load, write,
 * COMMIT (docs/licences.md, Concurrency). Statistics follow from the seat rows through
 * the database's triggers, not from here (docs/licences.md, Statistics). Re-activation records nothing
 * (docs/webhooks.md, The event spine).
 */
@Injectable()
export class SeatsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
    private readonly events: EventRecorder,
  ) {}

  /**
   * Binds the machine to the licence, or refreshes its existing seat, in decideActivation's order. A denial commits
   * only its event (and the release of dead seats), then is thrown.
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

  /**
   * The optimistic path first (docs/licences.md, Concurrency): read without a lock, decide, and write in one statement
   * that binds only if the licence is still as read. Two round trips, no transaction. When the read is stale (the
   * licence changed or got a seat meanwhile), a dead seat must be released, or the seat was released meanwhile, the
   * same decision is made again under the licence lock: BEGIN, load, write, COMMIT.
   */
  private async activateOnce(request: ActivationRequest, actor: Actor): Promise<BoundSeat> {
    const read = await this.seats.loadForSeatChange(request.licenseKey, this.dataSource.manager, false);
    const fast = await this.decideAndWrite(read, request, actor, undefined);
    const outcome =
      fast ??
      (await this.dataSource.transaction(async (manager) => {
        const locked = await this.seats.loadForSeatChange(request.licenseKey, manager, true);
        const written = await this.decideAndWrite(locked, request, actor, manager);
        if (!written) throw new Error('a seat change under the licence lock wrote nothing');
        return written;
      }));
    if (outcome instanceof AppError) throw outcome;
    return outcome;
  }

  /**
   * Decides the activation on `load` and writes it with its events in one statement. Without `manager` (nothing
   * locked) it writes only what stays right whatever happened since the read, and returns null for the rest; under
   * the licence lock it always writes.
   */
  private async decideAndWrite(
    load: SeatChangeLoad | null,
    request: ActivationRequest,
    actor: Actor,
    manager: EntityManager | undefined,
  ): Promise<BoundSeat | AppError | null> {
    const license = load?.license ?? null;
    const seats = load?.seats ?? [];
    const now = load?.now ?? new Date();
    const decision = decideActivation(license, seats, request, now, load?.pooledSeats ?? 0);
    // Releasing dead seats needs the seats locked; the optimistic path leaves it to the locked one.
    if (!manager && decision.release.length > 0) return null;
    const released = license ? this.releasedEvents(license, decision.release, seats, now) : [];
    if (decision.kind === 'deny') {
      const denied: DomainEvent = {
        type: 'license.activation_denied',
        actor,
        licenseId: license?.id ?? null,
        productId: license?.productId ?? null,
        productCode: license?.product?.code ?? null,
        ...(license
          ? {
              license: toLicenseDetails(
                license,
                seats.filter((s) => !decision.release.includes(s)),
                now,
              ),
            }
          : {}),
        details: { code: decision.error.code, machine_fingerprint: request.machineFingerprint, hostname: request.hostname, ip: actor.ip },
      };
      await this.events.recordWith(manager, seatChanges.releaseDead(ids(decision.release)), [...released, denied]);
      return decision.error;
    }
    const lic = license as License;
    const reported = { hostname: request.hostname, os: request.os ?? null, appVersion: request.appVersion ?? null, ip: actor.ip };
    if (decision.kind === 'refresh') {
      const rows = await this.events.recordWith<ActivationRow>(
        manager,
        seatChanges.refresh(ids(decision.release), decision.seat.id, reported),
        released,
      );
      if (rows.length === 0) return null;
      const [seat] = seatsFromRows(rows);
      const after = seats.filter((s) => !decision.release.includes(s)).map((s) => (s.id === seat.id ? seat : s));
      return { license: lic, seat, created: false, seats: after };
    }
    const seat = Object.assign(new Activation(), {
      id: load?.nextSeatId,
      licenseId: lic.id,
      productId: lic.productId,
      machineFingerprint: request.machineFingerprint,
      ...reported,
      activatedAt: now,
      lastSeenAt: now,
      releasedAt: null,
      releaseReason: null,
    });
    const after = [seat, ...decision.live];
    const activated = licenseEvent('license.activated', actor, lic, {
      seats: after,
      now,
      details: {
        machine_fingerprint: request.machineFingerprint,
        hostname: request.hostname,
        os: reported.os,
        app_version: reported.appVersion,
        seat_id: Number(seat.id),
        reactivation: false,
      },
    });
    const rows = await this.events.recordWith<ActivationRow>(
      manager,
      seatChanges.bind(ids(decision.release), seat, manager ? null : (load as SeatChangeLoad).version),
      [...released, activated],
    );
    if (rows.length === 0) return null;
    const [bound] = seatsFromRows(rows);
    return { license: lic, seat: bound, created: true, seats: [bound, ...decision.live] };
  }

  /**
   * Releases the machine's seat (`deactivated`), in decideDeactivation's order: INVALID_KEY, NOT_ACTIVATED,
   * DEACTIVATION_LIMIT_REACHED (counted under the licence lock, which every seat change of the licence takes, so
   * parallel attempts cannot all slip under it). Dead seats are released whatever the answer.
   */
  async deactivateSeat(request: SeatRequest, actor: Actor): Promise<ReleasedSeat> {
    const outcome = await this.dataSource.transaction(async (manager): Promise<ReleasedSeat | AppError> => {
      const load = await this.seats.loadForSeatChange(request.licenseKey, manager, true);
      const now = load?.now ?? new Date();
      const decision = decideDeactivation(load?.license ?? null, load?.seats ?? [], load?.recentDeactivations ?? [], request, now);
      if (!load) throw (decision as { error: AppError }).error;
      const { license, seats } = load;
      const released = this.releasedEvents(license, decision.release, seats, now);
      if (decision.kind === 'deny') {
        if (released.length) await this.events.recordWith(manager, seatChanges.releaseDead(ids(decision.release)), released);
        return decision.error;
      }
      const deactivated = licenseEvent('license.deactivated', actor, license, {
        seats: decision.live,
        now,
        details: { machine_fingerprint: request.machineFingerprint, seat_id: Number(decision.seat.id) },
      });
      await this.events.recordWith(manager, seatChanges.deactivate(ids(decision.release), decision.seat.id), [...released, deactivated]);
      return { license, canReactivate: decision.canReactivate };
    });
    if (outcome instanceof AppError) throw outcome;
    return outcome;
  }

  /** The `license.released` event of dead seats released by a client's change, as the system (none when none died). */
  private releasedEvents(license: License, dead: Activation[], seats: Activation[], now: Date): DomainEvent[] {
    if (dead.length === 0) return [];
    const live = seats.filter((s) => !dead.includes(s));
    return [
      heartbeatReleaseEvent(
        license.id,
        license.productId,
        license.product?.code ?? null,
        dead.map((s) => ({ id: s.id, machineFingerprint: s.machineFingerprint, lastSeenAt: s.lastSeenAt })),
        toLicenseDetails(license, live, now),
      ),
    ];
  }

  /**
   * One sweep batch: releases up to `batch` dead seats of any licences and records them per licence (with the licence
   * as it is after the release), in one transaction. Safe with several instances at once (see SeatsRepository.sweepDead).
   */
  async sweepDeadSeats(batch: number): Promise<SweepResult> {
    return this.dataSource.transaction(async (manager) => {
      const swept = await this.seats.sweepDead(batch, manager);
      const byLicence = new Map<number, SweptSeat[]>();
      for (const seat of swept) byLicence.set(seat.license_id, [...(byLicence.get(seat.license_id) ?? []), seat]);
      const events: DomainEvent[] = [];
      const now = new Date();
      for (const [licenseId, seats] of byLicence) {
        const license = await this.licenses.getById(licenseId, manager);
        if (!license) continue;
        const live = await this.seats.listCurrent(licenseId, manager);
        const released = seats.map((s) => ({ id: s.id, machineFingerprint: s.machine_fingerprint, lastSeenAt: s.last_seen_at }));
        events.push(
          heartbeatReleaseEvent(licenseId, license.productId, seats[0].product_code, released, toLicenseDetails(license, live, now)),
        );
      }
      if (events.length) await this.events.record(manager, ...events);
      return { released: swept.length };
    });
  }

  /**
   * A client's heartbeat (docs/client-api.md, Heartbeat): refreshes the machine's live seat every time (one statement), then answers in
   * decideHeartbeat's order.
   */
  async heartbeat(request: SeatRequest): Promise<HeartbeatResult> {
    const row = await this.seats.heartbeat(request.licenseKey, request.machineFingerprint);
    const license = row && {
      expiresAt: row.expires_at,
      graceDays: row.grace_days,
      active: row.active,
      revoked: row.revoked,
      heartbeatTimeoutSeconds: row.heartbeat_timeout_seconds,
    };
    const decision = decideHeartbeat(license, row?.seat_id === null ? null : (row?.last_seen_at ?? null), new Date());
    if (decision instanceof AppError) throw decision;
    return decision;
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
    const denial = statusDenial(deriveLicenseStatus(license));
    if (denial) throw denial;
    const seats = await this.seats.listCurrent(license.id);
    const seat = seats.find((s) => s.machineFingerprint === request.machineFingerprint);
    if (!seat) throw new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence');
    return { license, seat, created: false, seats };
  }

  /**
   * A licence (product loaded) and whether this machine holds a live seat, judged by no status rule: release
   * entitlement decides (docs/releases.md, Entitlement). Null: no licence has this key.
   */
  async seatHolding(request: SeatRequest): Promise<{ license: License; seatHeld: boolean } | null> {
    const license = await this.licenses.getByKey(request.licenseKey);
    if (!license) return null;
    const seats = await this.seats.listCurrent(license.id);
    const dead = deadSeats(license, seats, new Date());
    const seatHeld = seats.some((s) => s.machineFingerprint === request.machineFingerprint && !dead.includes(s));
    return { license, seatHeld };
  }

  /** A licence by id (product loaded), for a signed download link (docs/releases.md, Download links). */
  licenseById(id: number): Promise<License | null> {
    return this.licenses.getById(id);
  }

  /**
   * The online check in decideValidation's order: valid when the licence is active or in grace and the machine holds
   * a seat. A valid check refreshes the seat's last_seen_at, at most once per `lastSeenIntervalSeconds`.
   */
  async checkSeat(request: SeatRequest, lastSeenIntervalSeconds: number): Promise<SeatCheck> {
    const found = await this.seats.findForCheck(request.licenseKey, request.machineFingerprint, lastSeenIntervalSeconds);
    if (!found) throw invalidKey();
    const { license, seat } = found;
    const decision = decideValidation(license, seat, new Date());
    // Only a stale seat costs the write (and its round trip); the UPDATE checks staleness again.
    if (decision.touch && seat) await this.seats.touchLastSeen(seat.id, lastSeenIntervalSeconds);
    return {
      license,
      latestUsage: found.latestUsage,
      status: decision.status,
      graceEndsAt: decision.graceEndsAt,
      valid: decision.valid,
      code: decision.code,
    };
  }
}

const ids = (seats: Activation[]) => seats.map((s) => s.id);

/** `license.released` for seats released for a missed heartbeat (docs/licences.md, Heartbeats and dead seats), as the system. */
function heartbeatReleaseEvent(
  licenseId: number,
  productId: number,
  productCode: string | null,
  seats: { id: string; machineFingerprint: string; lastSeenAt: Date }[],
  license: object,
): DomainEvent {
  return {
    type: 'license.released',
    actor: SYSTEM_ACTOR,
    licenseId,
    productId,
    productCode,
    license,
    details: {
      machine_fingerprints: seats.map((s) => s.machineFingerprint),
      released: seats.length,
      reason: 'heartbeat_timeout',
      seat_ids: seats.map((s) => Number(s.id)),
      last_seen_at: seats.map((s) => s.lastSeenAt.toISOString()),
    },
  };
}
