import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../database/prepared-query';
import { Activation, ReleaseReason } from './activation.entity';
import type { License } from './license.entity';

/** Activation records ("seats"). A seat is current while released_at is null. */
@Injectable()
export class SeatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(Activation);
  }

  /** Current seats, most recent binding first. */
  async listCurrent(licenseId: number, manager?: EntityManager): Promise<Activation[]> {
    const { rows } = await preparedQuery<ActivationRow>(
      manager ?? this.dataSource.manager,
      'seats-current',
      `SELECT ${SEAT_COLUMNS} FROM activations WHERE license_id = $1 AND released_at IS NULL ORDER BY activated_at DESC, id DESC`,
      [licenseId],
    );
    return rows.map(activationFromRow);
  }

  /**
   * What validation needs in one round trip: the licence's status fields and this machine's current seat,
   * with `stale` telling (by the database clock) whether its last_seen_at is older than `minIntervalSeconds`.
   * A dead seat (silent for longer than the licence's heartbeat timeout) is no seat, swept yet or not.
   */
  async findForCheck(licenseKey: string, machineFingerprint: string, minIntervalSeconds: number): Promise<SeatCheckRow | null> {
    const { rows } = await preparedQuery<SeatCheckDbRow>(
      this.dataSource.manager,
      'seat-check-live',
      `SELECT l.id, l.expires_at, l.grace_days, l.active, l.revoked, s.id AS seat_id,
              s.last_seen_at < now() - make_interval(secs => $3) AS stale
       FROM licenses l JOIN products p ON p.id = l.product_id
       LEFT JOIN activations s ON s.license_id = l.id AND s.machine_fingerprint = $2 AND s.released_at IS NULL
         AND NOT ${SEAT_IS_DEAD('s', 'l', 'p')}
       WHERE l.license_key = $1`,
      [licenseKey, machineFingerprint, minIntervalSeconds],
    );
    if (rows.length === 0) return null;
    const r = rows[0];
    return {
      license: { id: r.id, expiresAt: r.expires_at, graceDays: r.grace_days, active: r.active, revoked: r.revoked },
      seat: r.seat_id === null ? null : { id: r.seat_id, stale: r.stale === true },
    };
  }

  /** Every record, current and past, newest first. */
  listHistory(licenseId: number, manager?: EntityManager): Promise<Activation[]> {
    return this.repo(manager).find({ where: { licenseId }, order: { activatedAt: 'DESC', id: 'DESC' } });
  }

  async insert(
    seat: Pick<
      Activation,
      'licenseId' | 'productId' | 'machineFingerprint' | 'hostname' | 'os' | 'appVersion' | 'ip' | 'activatedAt' | 'lastSeenAt'
    >,
    manager: EntityManager,
  ): Promise<Activation> {
    const { rows } = await preparedQuery<ActivationRow>(
      manager,
      'seat-insert',
      `INSERT INTO activations (license_id, product_id, machine_fingerprint, hostname, os, app_version, ip, activated_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${SEAT_COLUMNS}`,
      [
        seat.licenseId,
        seat.productId,
        seat.machineFingerprint,
        seat.hostname,
        seat.os,
        seat.appVersion,
        seat.ip,
        seat.activatedAt,
        seat.lastSeenAt,
      ],
    );
    return activationFromRow(rows[0]);
  }

  /** Releases the current seat of one fingerprint, or all current seats; returns the released records. */
  async release(
    licenseId: number,
    machineFingerprint: string | undefined,
    reason: ReleaseReason,
    manager: EntityManager,
  ): Promise<Activation[]> {
    const qb = manager
      .createQueryBuilder()
      .update(Activation)
      .set({ releasedAt: () => 'now()', releaseReason: reason })
      .where('license_id = :licenseId AND released_at IS NULL', { licenseId });
    if (machineFingerprint !== undefined) qb.andWhere('machine_fingerprint = :machineFingerprint', { machineFingerprint });
    const result = await qb.returning('*').execute();
    return (result.raw as ActivationRow[]).map(activationFromRow);
  }

  /** A machine activating again: refreshes last_seen_at and what it reports about itself; activated_at stays. */
  async refresh(
    seatId: string,
    reported: Pick<Activation, 'hostname' | 'os' | 'appVersion' | 'ip'>,
    manager: EntityManager,
  ): Promise<Activation> {
    const { rows } = await preparedQuery<ActivationRow>(
      manager,
      'seat-refresh',
      `UPDATE activations SET last_seen_at = now(), hostname = $2, os = $3, app_version = $4, ip = $5 WHERE id = $1 RETURNING ${SEAT_COLUMNS}`,
      [seatId, reported.hostname, reported.os, reported.appVersion, reported.ip],
    );
    return activationFromRow(rows[0]);
  }

  /** Refreshes last_seen_at only when older than `minIntervalSeconds`, so frequent validations do not write every time. */
  async touchLastSeen(seatId: string, minIntervalSeconds: number, manager?: EntityManager): Promise<void> {
    await preparedQuery(
      manager ?? this.dataSource.manager,
      'seat-touch',
      `UPDATE activations SET last_seen_at = now() WHERE id = $1 AND released_at IS NULL AND last_seen_at < now() - make_interval(secs => $2)`,
      [seatId, minIntervalSeconds],
    );
  }

  /**
   * A heartbeat in one statement: refreshes the machine's seat unless it is released or dead (a dead seat stays
   * dead: another machine may be taking it right now), and returns the licence's status fields and timeout.
   * No row: unknown key. `seat_id` null: no live seat for this machine.
   */
  async heartbeat(licenseKey: string, machineFingerprint: string): Promise<HeartbeatRow | null> {
    const { rows } = await preparedQuery<HeartbeatRow>(
      this.dataSource.manager,
      'seat-heartbeat',
      `WITH l AS (
         SELECT l.id, l.expires_at, l.grace_days, l.active, l.revoked,
                ${HEARTBEAT_TIMEOUT_SQL('l', 'p')} AS heartbeat_timeout_seconds
         FROM licenses l JOIN products p ON p.id = l.product_id WHERE l.license_key = $1
       ), beat AS (
         UPDATE activations s SET last_seen_at = now() FROM l
         WHERE s.license_id = l.id AND s.machine_fingerprint = $2 AND s.released_at IS NULL
           AND (l.heartbeat_timeout_seconds IS NULL OR s.last_seen_at >= now() - make_interval(secs => l.heartbeat_timeout_seconds))
         RETURNING s.id, s.last_seen_at
       )
       SELECT l.id, l.expires_at, l.grace_days, l.active, l.revoked, l.heartbeat_timeout_seconds, beat.id AS seat_id, beat.last_seen_at
       FROM l LEFT JOIN beat ON true`,
      [licenseKey, machineFingerprint],
    );
    return rows[0] ?? null;
  }

  /** Releases the licence's seats silent for longer than `timeoutSeconds` (`heartbeat_timeout`); the caller holds the licence lock. */
  async releaseDead(licenseId: number, timeoutSeconds: number, manager: EntityManager): Promise<Activation[]> {
    const { rows } = await preparedQuery<ActivationRow>(
      manager,
      'seats-release-dead-of-licence',
      `UPDATE activations SET released_at = now(), release_reason = 'heartbeat_timeout'
       WHERE license_id = $1 AND released_at IS NULL AND last_seen_at < now() - make_interval(secs => $2)
       RETURNING ${SEAT_COLUMNS}`,
      [licenseId, timeoutSeconds],
    );
    return rows.map(activationFromRow);
  }

  async findCurrent(licenseId: number, machineFingerprint: string, manager?: EntityManager): Promise<Activation | null> {
    const { rows } = await preparedQuery<ActivationRow>(
      manager ?? this.dataSource.manager,
      'seat-current-of-machine',
      `SELECT ${SEAT_COLUMNS} FROM activations WHERE license_id = $1 AND machine_fingerprint = $2 AND released_at IS NULL`,
      [licenseId, machineFingerprint],
    );
    return rows.length ? activationFromRow(rows[0]) : null;
  }

  /**
   * One batch of the sweep: releases up to `batch` dead seats of any licence. Seats another transaction holds
   * (a sweep on another instance, an activation releasing them itself) are skipped, not waited for, and the
   * UPDATE checks released_at again, so a seat is released exactly once whoever gets there first.
   */
  async sweepDead(batch: number, manager: EntityManager): Promise<SweptSeat[]> {
    const { rows } = await preparedQuery<SweptSeat & { id: string }>(
      manager,
      'seats-sweep-dead',
      `WITH dead AS (
         SELECT s.id, l.id AS license_id, p.code AS product_code FROM activations s
         JOIN licenses l ON l.id = s.license_id JOIN products p ON p.id = l.product_id
         WHERE s.released_at IS NULL AND ${SEAT_IS_DEAD('s', 'l', 'p')}
         ORDER BY s.last_seen_at LIMIT $1
         FOR UPDATE OF s SKIP LOCKED
       )
       UPDATE activations s SET released_at = now(), release_reason = 'heartbeat_timeout'
       FROM dead WHERE s.id = dead.id AND s.released_at IS NULL
       RETURNING s.id, s.machine_fingerprint, s.last_seen_at, dead.license_id, dead.product_code`,
      [batch],
    );
    return rows.map((r) => ({ ...r, id: String(r.id) }));
  }

  /** The licence's client deactivations since `days` days ago, oldest first (the caller holds the licence lock). */
  async recentDeactivations(licenseId: number, days: number, manager: EntityManager): Promise<Date[]> {
    const { rows } = await preparedQuery<{ released_at: Date }>(
      manager,
      'seats-recent-deactivations',
      `SELECT released_at FROM activations
       WHERE license_id = $1 AND release_reason = 'deactivated' AND released_at > now() - make_interval(days => $2)
       ORDER BY released_at`,
      [licenseId, days],
    );
    return rows.map((r) => r.released_at);
  }
}

/** The merged heartbeat timeout of licence `l` of product `p` (the licence's override over the product's default), or NULL. */
const HEARTBEAT_TIMEOUT_SQL = (l: string, p: string) => `((${p}.default_policy || ${l}.policy) ->> 'heartbeat_timeout_seconds')::int`;

/** Seat `s` of licence `l` (product `p`) is dead: silent for longer than the licence's heartbeat timeout. */
const SEAT_IS_DEAD = (s: string, l: string, p: string) =>
  `(${HEARTBEAT_TIMEOUT_SQL(l, p)} IS NOT NULL AND ${s}.last_seen_at < now() - make_interval(secs => ${HEARTBEAT_TIMEOUT_SQL(l, p)}))`;

/** A seat the sweep released. */
export interface SweptSeat {
  id: string;
  machine_fingerprint: string;
  last_seen_at: Date;
  license_id: number;
  product_code: string;
}

/** A heartbeat's licence status fields, merged timeout and (when it has a live seat) the refreshed seat. */
export interface HeartbeatRow {
  id: number;
  expires_at: Date | null;
  grace_days: number;
  active: boolean;
  revoked: boolean;
  heartbeat_timeout_seconds: number | null;
  seat_id: string | null;
  last_seen_at: Date | null;
}

const SEAT_COLUMNS =
  'id, license_id, product_id, machine_fingerprint, hostname, os, app_version, ip, activated_at, last_seen_at, released_at, release_reason';

/** The licence fields that decide its status, and the checked machine's current seat (if any). */
export interface SeatCheckRow {
  license: Pick<License, 'id' | 'expiresAt' | 'graceDays' | 'active' | 'revoked'>;
  seat: { id: string; stale: boolean } | null;
}

/** The validation check's row: licence status fields and the machine's current seat, null when it has none. */
interface SeatCheckDbRow {
  id: number;
  expires_at: Date | null;
  grace_days: number;
  active: boolean;
  revoked: boolean;
  seat_id: string | null;
  stale: boolean | null;
}

/** An activations row as pg returns it: bigint id as a string, timestamptz as Date. */
interface ActivationRow {
  id: string;
  license_id: number;
  product_id: number;
  machine_fingerprint: string;
  hostname: string | null;
  os: string | null;
  app_version: string | null;
  ip: string | null;
  activated_at: Date;
  last_seen_at: Date;
  released_at: Date | null;
  release_reason: ReleaseReason | null;
}

function activationFromRow(row: ActivationRow): Activation {
  return Object.assign(new Activation(), {
    id: String(row.id),
    licenseId: row.license_id,
    productId: row.product_id,
    machineFingerprint: row.machine_fingerprint,
    hostname: row.hostname,
    os: row.os,
    appVersion: row.app_version,
    ip: row.ip,
    activatedAt: row.activated_at,
    lastSeenAt: row.last_seen_at,
    releasedAt: row.released_at,
    releaseReason: row.release_reason,
  });
}
