import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { mergePolicy } from '../../common/seat-policy/license-policy';
import { param, raw, runStatement, type Sql, sql } from '../../database/statement';
import type { RecordedChange } from '../../events/event-recorder';
import { Activation, ReleaseReason } from './activation.entity';
import {
  ACTIVATION_ROWS,
  type ActivationRow,
  type HeartbeatRow,
  licenseFromJson,
  SEAT_COLUMNS,
  type SeatChangeJson,
  type SeatChangeLoad,
  type SeatCheckDbRow,
  type SeatCheckRow,
  type SweptSeat,
} from './seat-rows';

// The seats' rows and mappers live in seat-rows.ts; callers keep importing them from here.
export {
  type ActivationRow,
  type HeartbeatRow,
  SEAT_COLUMNS,
  type SeatChangeLoad,
  type SeatCheckRow,
  seatsFromRows,
  type SweptSeat,
} from './seat-rows';

/**
 * Activation records ("seats"). A seat is current while released_at is null. Style: named SQL with typed rows
 * (ActivationRow), read through its row shape (docs/architecture.md, Database style).
 */
@Injectable()
export class SeatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * A seat change's one load: the licence with its product, live seats (most recent binding first), client
   * deactivations of the last 30 days, the database's time, the id a new seat will take and the licence row's version.
   * Null for an unknown key. With `lock` it locks the licence (and, when seats can die, its live seats) and the caller
   * holds the transaction; without, it only reads, for the optimistic path (docs/licences.md, Concurrency).
   */
  async loadForSeatChange(licenseKey: string, manager: EntityManager, lock: boolean): Promise<SeatChangeLoad | null> {
    const rows = lock
      ? await runStatement<{ load: SeatChangeJson | null }>(
          manager,
          'license-for-seat-change-v2',
          sql`SELECT license_for_seat_change(${licenseKey}, ${lock}) AS load`,
        )
      : await runStatement<{ load: SeatChangeJson }>(manager, 'seat-change-read', seatChangeRead(licenseKey));
    const load = rows[0]?.load;
    if (!load) return null;
    return {
      license: licenseFromJson(load.license, load.product),
      seats: load.seats.map((s) =>
        ACTIVATION_ROWS.fromRow({
          ...s,
          activated_at: new Date(s.activated_at),
          last_seen_at: new Date(s.last_seen_at),
          released_at: null,
        }),
      ),
      recentDeactivations: load.recent_deactivations.map((d) => new Date(d)),
      now: new Date(load.now),
      nextSeatId: String(load.next_seat_id),
      version: load.version,
      pooledSeats: Number(load.pooled_seats ?? 0),
    };
  }

  /** Current seats, most recent binding first. */
  async listCurrent(licenseId: number, manager?: EntityManager): Promise<Activation[]> {
    const rows = await runStatement<ActivationRow>(
      manager ?? this.dataSource.manager,
      'seats-current',
      sql`SELECT ${raw(SEAT_COLUMNS)} FROM activations WHERE license_id = ${licenseId} AND released_at IS NULL ORDER BY activated_at DESC, id DESC`,
    );
    return rows.map(ACTIVATION_ROWS.fromRow);
  }

  /** The seats bound now on any of these licences (a customer's machines), most recently seen first, at most `limit`. */
  async listCurrentOfLicenses(licenseIds: number[], limit: number): Promise<Activation[]> {
    const rows = await runStatement<ActivationRow>(
      this.dataSource.manager,
      'seats-current-of-licenses',
      sql`SELECT ${raw(SEAT_COLUMNS)} FROM activations WHERE license_id = ANY(${licenseIds}::int[]) AND released_at IS NULL
       ORDER BY last_seen_at DESC, id DESC LIMIT ${limit}`,
    );
    return rows.map(ACTIVATION_ROWS.fromRow);
  }

  /**
   * What validation needs in one round trip: the licence's status fields and this machine's current seat,
   * with `stale` telling (by the database clock) whether its last_seen_at is older than `minIntervalSeconds`.
   * A dead seat (silent for longer than the licence's heartbeat timeout) is no seat, swept yet or not.
   */
  async findForCheck(licenseKey: string, machineFingerprint: string, minIntervalSeconds: number): Promise<SeatCheckRow | null> {
    const rows = await runStatement<SeatCheckDbRow>(
      this.dataSource.manager,
      'seat-check-live-usage',
      sql`SELECT l.id, l.expires_at, l.grace_days, l.active, l.revoked, s.id AS seat_id,
              s.last_seen_at < now() - make_interval(secs => ${minIntervalSeconds}) AS stale,
              l.product_id, p.code AS product_code, l.created_at, l.policy, p.default_policy,
              u.period_start AS usage_period_start, u.uses
       FROM licenses l JOIN product_catalog p ON p.id = l.product_id
       LEFT JOIN activations s ON s.license_id = l.id AND s.machine_fingerprint = ${machineFingerprint} AND s.released_at IS NULL
         AND NOT ${raw(SEAT_IS_DEAD('s', 'l', 'p'))}
       LEFT JOIN LATERAL (
         SELECT period_start, uses FROM usage_counters WHERE license_id = l.id ORDER BY period_start DESC LIMIT 1
       ) u ON true
       WHERE l.license_key = ${licenseKey}`,
    );
    if (rows.length === 0) return null;
    const r = rows[0];
    return {
      license: {
        id: r.id,
        expiresAt: r.expires_at,
        graceDays: r.grace_days,
        active: r.active,
        revoked: r.revoked,
        productId: r.product_id,
        productCode: r.product_code,
        createdAt: r.created_at,
        policy: mergePolicy(r.default_policy, r.policy),
      },
      seat: r.seat_id === null ? null : { id: r.seat_id, stale: r.stale === true },
      latestUsage: r.usage_period_start === null ? null : { periodStart: r.usage_period_start, uses: Number(r.uses) },
    };
  }

  /** Every record, current and past, newest first. */
  async listHistory(licenseId: number, manager?: EntityManager): Promise<Activation[]> {
    const rows = await runStatement<ActivationRow>(
      manager ?? this.dataSource.manager,
      'seats-history',
      sql`SELECT ${raw(SEAT_COLUMNS)} FROM activations WHERE license_id = ${licenseId} ORDER BY activated_at DESC, id DESC`,
    );
    return rows.map(ACTIVATION_ROWS.fromRow);
  }

  /** Releases the current seat of one fingerprint, or all current seats; returns the released records. */
  async release(
    licenseId: number,
    machineFingerprint: string | undefined,
    reason: ReleaseReason,
    manager: EntityManager,
  ): Promise<Activation[]> {
    const fingerprint = param(machineFingerprint ?? null);
    const rows = await runStatement<ActivationRow>(
      manager,
      'seats-release',
      sql`UPDATE activations SET released_at = now(), release_reason = ${reason}
       WHERE license_id = ${licenseId} AND released_at IS NULL AND (${fingerprint}::varchar IS NULL OR machine_fingerprint = ${fingerprint})
       RETURNING ${raw(SEAT_COLUMNS)}`,
    );
    return rows.map(ACTIVATION_ROWS.fromRow);
  }

  /** Refreshes last_seen_at only when older than `minIntervalSeconds`, so frequent validations do not write every time. */
  async touchLastSeen(seatId: string, minIntervalSeconds: number, manager?: EntityManager): Promise<void> {
    await runStatement(
      manager ?? this.dataSource.manager,
      'seat-touch',
      sql`UPDATE activations SET last_seen_at = now() WHERE id = ${seatId} AND released_at IS NULL AND last_seen_at < now() - make_interval(secs => ${minIntervalSeconds})`,
    );
  }

  /**
   * A heartbeat in one statement: refreshes the machine's seat unless it is released or dead (a dead seat stays
   * dead: another machine may be taking it right now), and returns the licence's status fields and timeout.
   * No row: unknown key. `seat_id` null: no live seat for this machine.
   */
  async heartbeat(licenseKey: string, machineFingerprint: string): Promise<HeartbeatRow | null> {
    const rows = await runStatement<HeartbeatRow>(
      this.dataSource.manager,
      'seat-heartbeat',
      sql`WITH l AS (
         SELECT l.id, l.expires_at, l.grace_days, l.active, l.revoked,
                ${raw(HEARTBEAT_TIMEOUT_SQL('l', 'p'))} AS heartbeat_timeout_seconds
         FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.license_key = ${licenseKey}
       ), beat AS (
         UPDATE activations s SET last_seen_at = now() FROM l
         WHERE s.license_id = l.id AND s.machine_fingerprint = ${machineFingerprint} AND s.released_at IS NULL
           AND NOT seat_is_dead(s.last_seen_at, l.heartbeat_timeout_seconds, now())
         RETURNING s.id, s.last_seen_at
       )
       SELECT l.id, l.expires_at, l.grace_days, l.active, l.revoked, l.heartbeat_timeout_seconds, beat.id AS seat_id, beat.last_seen_at
       FROM l LEFT JOIN beat ON true`,
    );
    return rows[0] ?? null;
  }

  /**
   * One batch of the sweep: releases up to `batch` dead seats of any licence. Seats another transaction holds
   * (a sweep on another instance, an activation releasing them itself) are skipped, not waited for, and the
   * UPDATE checks released_at again, so a seat is released exactly once whoever gets there first.
   */
  async sweepDead(batch: number, manager: EntityManager): Promise<SweptSeat[]> {
    const rows = await runStatement<SweptSeat & { id: string }>(
      manager,
      'seats-sweep-dead',
      sql`WITH dead AS (
         SELECT s.id, l.id AS license_id, p.code AS product_code FROM activations s
         JOIN licenses l ON l.id = s.license_id JOIN product_catalog p ON p.id = l.product_id
         WHERE s.released_at IS NULL AND ${raw(SEAT_IS_DEAD('s', 'l', 'p'))}
         ORDER BY s.last_seen_at LIMIT ${batch}
         FOR UPDATE OF s SKIP LOCKED
       )
       UPDATE activations s SET released_at = now(), release_reason = 'heartbeat_timeout'
       FROM dead WHERE s.id = dead.id AND s.released_at IS NULL
       RETURNING s.id, s.machine_fingerprint, s.last_seen_at, dead.license_id, dead.product_code`,
    );
    return rows.map((r) => ({ ...r, id: String(r.id) }));
  }
}

/** The merged heartbeat timeout of licence `l` of product `p`, or NULL (docs/licences.md, Seat limit and dead seats). */
const HEARTBEAT_TIMEOUT_SQL = (l: string, p: string) => `license_heartbeat_timeout(${p}.default_policy, ${l}.policy)`;

/** Seat `s` of licence `l` (product `p`) is dead: silent for longer than the licence's heartbeat timeout. */
export const SEAT_IS_DEAD = (s: string, l: string, p: string) => `seat_is_dead(${s}.last_seen_at, ${HEARTBEAT_TIMEOUT_SQL(l, p)}, now())`;

/** Releases the `dead` seats (under the licence lock) as `heartbeat_timeout`: the first CTE of every seat change. */
const releaseDead = (dead: string[]) => sql`dead AS (
    UPDATE activations SET released_at = now(), release_reason = 'heartbeat_timeout' WHERE id = ANY(${dead}::bigint[]) AND released_at IS NULL RETURNING id)`;

/** The reported machine fields of a seat. */
export type ReportedMachine = Pick<Activation, 'hostname' | 'os' | 'appVersion' | 'ip'>;

/**
 * The writes of seat changes, as CTEs for EventRecorder.recordWith: the change and its events are one statement.
 * Each releases `dead` (seat ids) first; `change` returns the seat it wrote.
 */
export const seatChanges = {
  /**
   * The dead seats go first (reading `dead` runs it before the insert), so a machine whose own seat died binds again.
   * With `version` (the optimistic path, nothing locked) the seat is bound only if the licence still exists and its
   * seat counter is still the one read, which the bind moves (`guard`): a seat bound or a locked seat change since
   * the read makes this write do nothing (docs/licences.md, Concurrency). Without it, the caller holds the licence lock
   * and has moved the counter already.
   */
  bind(dead: string[], seat: Activation, version: string | null): RecordedChange {
    const guard =
      version === null
        ? sql`guard AS (SELECT ${seat.licenseId}::int AS id)`
        : sql`licence AS (SELECT id FROM licenses WHERE id = ${seat.licenseId}::int FOR KEY SHARE), guard AS (
        INSERT INTO license_seat_versions AS v (license_id, version) SELECT id, ${version}::bigint + 1 FROM licence
        ON CONFLICT (license_id) DO UPDATE SET version = v.version + 1 WHERE v.version = ${version}::bigint
        RETURNING license_id AS id)`;
    return {
      name: version === null ? 'seat-bind-locked' : 'seat-bind-guarded',
      ctes: sql`${releaseDead(dead)}, ${guard}, change AS (
        INSERT INTO activations (id, license_id, product_id, machine_fingerprint, hostname, os, app_version, ip, activated_at, last_seen_at)
        SELECT ${seat.id}::bigint, guard.id, ${seat.productId}::int, ${seat.machineFingerprint}::varchar, ${seat.hostname}::varchar,
          ${seat.os}::varchar, ${seat.appVersion}::varchar, ${seat.ip}::varchar, ${seat.activatedAt}::timestamptz, ${seat.lastSeenAt}::timestamptz
        FROM guard, (SELECT count(*) FROM dead) AS released_first
        RETURNING ${raw(SEAT_COLUMNS)})`,
      eventsOnlyIf: raw('true'),
    };
  },
  /**
   * A machine activating again: last_seen_at and what it reports about itself; activated_at stays. Nothing when the
   * seat was released since it was read (the optimistic path then takes the locked one).
   */
  refresh(dead: string[], seatId: string, reported: ReportedMachine): RecordedChange {
    return {
      name: 'seat-refresh-live',
      ctes: sql`${releaseDead(dead)}, change AS (
        UPDATE activations SET last_seen_at = now(), hostname = ${reported.hostname}, os = ${reported.os}, app_version = ${reported.appVersion}, ip = ${reported.ip}
        WHERE id = ${seatId} AND released_at IS NULL RETURNING ${raw(SEAT_COLUMNS)})`,
    };
  },
  /** A client's deactivation of a seat. */
  deactivate(dead: string[], seatId: string): RecordedChange {
    return {
      name: 'seat-deactivate',
      ctes: sql`${releaseDead(dead)}, change AS (
        UPDATE activations SET released_at = now(), release_reason = 'deactivated' WHERE id = ${seatId} AND released_at IS NULL RETURNING ${raw(SEAT_COLUMNS)})`,
    };
  },
  /** Only the dead seats (a refused change still releases them). */
  releaseDead(dead: string[]): RecordedChange {
    return { name: 'seats-release-dead', ctes: sql`${releaseDead(dead)}, change AS (SELECT 1)` };
  },
};

/**
 * The optimistic path's read as one plain statement: what license_for_seat_change(key, false) returns
 * (src/database/sql/license_for_seat_change.v5.sql) without the PL/pgSQL call and its separate lookup of the licence
 * id, which cost about half of the read (docs/performance.md, Performance round 3). The whole licence row goes as
 * json (the mapping picks its fields). Twin of the function's read: test/integration/seats.int-spec.ts compares both.
 */
const seatChangeRead = (licenseKey: string): Sql => sql`SELECT json_build_object(
    'license', to_json(l), 'product', to_json(p), 'now', now(),
    'version', coalesce((SELECT v.version FROM license_seat_versions v WHERE v.license_id = l.id), 0)::text,
    'next_seat_id', nextval('activations_id_seq'),
    'seats', coalesce((SELECT json_agg(s ORDER BY s.activated_at DESC, s.id DESC) FROM activations s
                       WHERE s.license_id = l.id AND s.released_at IS NULL), '[]'::json),
    'pooled_seats', coalesce((SELECT sum(r.seats) FROM relay_pools r
                       WHERE r.license_id = l.id AND r.ended_at IS NULL AND r.expires_at > now()), 0)::int,
    'recent_deactivations', coalesce((SELECT json_agg(a.released_at ORDER BY a.released_at) FROM activations a
                       WHERE a.license_id = l.id AND a.release_reason = 'deactivated'
                         AND a.released_at > now() - interval '30 days'), '[]'::json)) AS load
  FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.license_key = ${licenseKey}`;
