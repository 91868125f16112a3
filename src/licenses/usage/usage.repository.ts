import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RecordedChange } from '../../events/event-recorder';
import { param, raw, runStatement, sql } from '../../database/statement';
import { mergedPolicySql } from '../../common/seat-policy/license-policy';
import { licenseUsableSql } from '../license-status';
import { SEAT_IS_DEAD } from '../seats/seats.repository';
import type { StoredUsage, UsageAnswer } from './usage-decisions';

/** The licence's effective policy, merged as mergePolicy does (one rule, spelled for SQL by mergedPolicySql). */
const POLICY = mergedPolicySql('p.default_policy', 'l.policy');

/** How long an idempotency key of POST /api/v1/usage keeps its answer (docs/client-api.md, Usage). */
export const IDEMPOTENCY_KEY_HOURS = 24;

/** What the one-statement count found and counted: the new count and the licence's meter. */
export interface CountedBelowCap {
  uses: number;
  maxUses: number;
  usesPeriod: 'none' | 'month';
  createdAt: Date;
}

/** A claimed key: `claimed` when this request owns it now, else the stored request hash and first answer. */
export type IdempotencyClaim = { claimed: true } | { claimed: false; requestHash: string; answer: UsageAnswer | null };

/**
 * Usage counters and idempotency keys (docs/licences.md, Usage metering). Style: named SQL with typed rows
 * (docs/architecture.md, Database style). Counting is one atomic upsert: concurrent increments never pass the cap.
 */
@Injectable()
export class UsageRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Adds `increment` to the period's counter unless that would pass `maxUses`, in one statement (the row lock of the
   * upsert orders concurrent increments; each re-checks the cap on the latest count). Run through
   * EventRecorder.recordWith, so the event of the increment that reaches the cap commits in the same statement; it
   * returns the new count, or no row when nothing was counted.
   */
  incrementChange(licenseId: number, periodStart: Date, increment: number, maxUses: number): RecordedChange {
    const max = param(maxUses);
    const by = param(increment);
    return {
      name: 'usage-increment',
      ctes: sql`change AS (
         INSERT INTO usage_counters AS c (license_id, period_start, uses)
         SELECT ${licenseId}, ${periodStart}, ${by} WHERE ${by}::bigint <= ${max}::bigint
         ON CONFLICT (license_id, period_start) DO UPDATE SET uses = c.uses + EXCLUDED.uses
           WHERE c.uses + EXCLUDED.uses <= ${max}::bigint
         RETURNING uses)`,
      // Only the increment that reaches the cap is news (docs/licences.md, Usage metering).
      eventsOnlyIf: sql`uses = ${max}::bigint`,
    };
  }

  /**
   * The common case in one statement (docs/licences.md, Usage metering): the machine holds a live seat of a usable,
   * metered licence and the increment leaves the count below the cap; then it counts, under the counter row's lock
   * like incrementChange. Anything else counts nothing and returns null, and the caller decides as before (the exact
   * error, a licence not metered, or the increment that reaches the cap, which commits with its event). So this path
   * never records an event, and concurrent increments still never pass the cap. The conditions are those of
   * decideUsage in SQL: the licence usable at `now` (licenseUsableSql), the seat check of validate (SEAT_IS_DEAD), and
   * the policy merged by mergedPolicySql, the SQL spelling of mergePolicy.
   */
  async countBelowCap(
    licenseKey: string,
    machineFingerprint: string,
    increment: number,
    monthStart: Date,
    now: Date,
  ): Promise<CountedBelowCap | null> {
    const by = param(increment);
    // `at` carries the request's time into licenseUsableSql, which names the instant by an SQL expression.
    const rows = await runStatement<{ uses: string; max_uses: string; uses_period: string | null; created_at: Date }>(
      this.dataSource.manager,
      'usage-count-below-cap',
      sql`WITH at AS (SELECT ${now}::timestamptz AS now), target AS (
         SELECT l.id, l.created_at, ${raw(POLICY)}->>'uses_period' AS uses_period, (${raw(POLICY)}->>'max_uses')::bigint AS max_uses
         FROM licenses l JOIN product_catalog p ON p.id = l.product_id, at
         WHERE l.license_key = ${licenseKey} AND ${raw(licenseUsableSql('l', 'at.now'))}
           AND EXISTS (SELECT 1 FROM activations s WHERE s.license_id = l.id AND s.machine_fingerprint = ${machineFingerprint} AND s.released_at IS NULL
             AND NOT ${raw(SEAT_IS_DEAD('s', 'l', 'p'))})
       ), counted AS (
         INSERT INTO usage_counters AS c (license_id, period_start, uses)
         SELECT id, CASE WHEN uses_period = 'month' THEN ${monthStart}::timestamptz ELSE created_at END, ${by}::bigint FROM target
         WHERE max_uses IS NOT NULL AND ${by}::bigint < max_uses
         ON CONFLICT (license_id, period_start) DO UPDATE SET uses = c.uses + EXCLUDED.uses
           WHERE c.uses + EXCLUDED.uses < (SELECT max_uses FROM target)
         RETURNING uses
       )
       SELECT counted.uses, target.max_uses, target.uses_period, target.created_at FROM counted, target`,
    );
    const row = rows[0];
    if (!row) return null;
    return {
      uses: Number(row.uses),
      maxUses: Number(row.max_uses),
      usesPeriod: row.uses_period === 'month' ? 'month' : 'none',
      createdAt: row.created_at,
    };
  }

  /** The uses counted in the period starting at `periodStart` (0 when none). */
  async usesIn(licenseId: number, periodStart: Date, manager?: EntityManager): Promise<number> {
    const rows = await runStatement<{ uses: string }>(
      manager ?? this.dataSource.manager,
      'usage-in-period',
      sql`SELECT uses FROM usage_counters WHERE license_id = ${licenseId} AND period_start = ${periodStart}`,
    );
    return rows.length ? Number(rows[0].uses) : 0;
  }

  /** Every counter of the licence, newest period first. */
  async history(licenseId: number, manager?: EntityManager): Promise<StoredUsage[]> {
    const rows = await runStatement<{ period_start: Date; uses: string }>(
      manager ?? this.dataSource.manager,
      'usage-history',
      sql`SELECT period_start, uses FROM usage_counters WHERE license_id = ${licenseId} ORDER BY period_start DESC`,
    );
    return rows.map((r) => ({ periodStart: r.period_start, uses: Number(r.uses) }));
  }

  /** Sets the period's count to 0; returns the uses it had. */
  async reset(licenseId: number, periodStart: Date, manager: EntityManager): Promise<number> {
    const rows = await runStatement<{ uses: string }>(
      manager,
      'usage-reset',
      sql`DELETE FROM usage_counters WHERE license_id = ${licenseId} AND period_start = ${periodStart} RETURNING uses`,
    );
    return rows.length ? Number(rows[0].uses) : 0;
  }

  /**
   * Claims an idempotency key for this request, or returns who has it. A key older than IDEMPOTENCY_KEY_HOURS is
   * taken over. A concurrent claim of the same key waits on the first one's row until that transaction ends: a
   * commit leaves the stored answer, a rollback (no 200 answer) leaves the key free for the waiter.
   */
  async claimIdempotencyKey(licenseId: number, key: string, requestHash: string, manager: EntityManager): Promise<IdempotencyClaim> {
    const licenseIdParam = param(licenseId);
    const keyParam = param(key);
    const rows = await runStatement<{ claimed: boolean; request_hash: string; answer: UsageAnswer | null }>(
      manager,
      'usage-claim-key',
      sql`WITH claim AS (
         INSERT INTO usage_idempotency_keys AS k (license_id, idempotency_key, request_hash)
         VALUES (${licenseIdParam}, ${keyParam}, ${requestHash})
         ON CONFLICT (license_id, idempotency_key) DO UPDATE SET request_hash = EXCLUDED.request_hash, answer = NULL, created_at = now()
           WHERE k.created_at < now() - make_interval(hours => ${IDEMPOTENCY_KEY_HOURS})
         RETURNING true AS claimed, request_hash, answer
       )
       SELECT claimed, request_hash, answer FROM claim
       UNION ALL
       SELECT false, request_hash, answer FROM usage_idempotency_keys
       WHERE license_id = ${licenseIdParam} AND idempotency_key = ${keyParam} AND NOT EXISTS (SELECT 1 FROM claim)`,
    );
    let row = rows[0];
    if (row?.claimed) return { claimed: true };
    // The key was committed by a request this one waited for: the statement's snapshot predates it, a new one sees it.
    row ??= (
      await runStatement<{ claimed: boolean; request_hash: string; answer: UsageAnswer | null }>(
        manager,
        'usage-key-lookup',
        sql`SELECT false AS claimed, request_hash, answer FROM usage_idempotency_keys WHERE license_id = ${licenseId} AND idempotency_key = ${key}`,
      )
    )[0];
    if (!row) throw new Error('usage idempotency key neither claimed nor found');
    return { claimed: false, requestHash: row.request_hash, answer: row.answer && answerFromJson(row.answer) };
  }

  /** Stores the first answer of a claimed key. */
  async saveAnswer(licenseId: number, key: string, answer: UsageAnswer, manager: EntityManager): Promise<void> {
    await runStatement(
      manager,
      'usage-save-answer',
      sql`UPDATE usage_idempotency_keys SET answer = ${JSON.stringify(answer)} WHERE license_id = ${licenseId} AND idempotency_key = ${key}`,
    );
  }
}

/** A stored answer in the answer's own key order (jsonb keeps its own), so a replay is the same JSON as the first. */
function answerFromJson(a: UsageAnswer): UsageAnswer {
  return { uses: a.uses, max_uses: a.max_uses, remaining: a.remaining, period_start: a.period_start, period_end: a.period_end };
}
