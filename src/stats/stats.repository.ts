import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { param, raw, runStatement, type Sql, sql } from '../database/statement';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';

/** Per product: the summed counters (see the StatsCounters migration) by metric, e.g. `type:TRIAL`, `usable`, `expires`, `seats`. */
export interface ProductCountersRow {
  product_id: number;
  product_code: string;
  product_name: string;
  counts: Record<string, number>;
}

// Hour buckets are UTC hours (timestamps without time zone). Written inline (not in a CTE) so the planner sees the
// values: with a CTE it misjudged the row counts by 300x and spent more time compiling the query (JIT) than running it.
const HOUR = `date_trunc('hour', now() AT TIME ZONE 'UTC')`;
const HOUR_START = `(${HOUR} AT TIME ZONE 'UTC')`;
const HOUR_END = `(${HOUR_START} + interval '1 hour')`;
/** The 30-day window of the seats and releases: 30 days of 24 hours, as the triggers bucket them (seat_stat_rows). */
const WINDOW = `interval '720 hours'`;
/** The read is in the second half of its UTC hour: fewer events lie between now and the hour's end than before now. */
const IN_LATE_HALF = `(now() >= ${HOUR_START} + interval '30 minutes')`;

/**
 * How the part of the current hour is counted for the clock-driven counters (expiries, grace ends, seats and
 * releases leaving the 30-day window). Both are exact at any moment: `add` sums the buckets of the hours before
 * the current one and counts the events from the hour's start to now; `subtract` sums the current hour's bucket
 * too and takes away the events from now to the hour's end. `auto` (what the server runs) picks the shorter
 * stretch, so the rows counted from the tables are at most half an hour's events.
 */
export type WindowEdge = 'auto' | 'add' | 'subtract';

/**
 * The current hour's part of one clock-driven metric, counted from `rows` (an index range: `col` is the indexed
 * column, and the event happens `shift` after it). `strict`: the event has passed when `col + shift < now()`
 * (expiries: a licence expiring at this very instant has not passed yet); otherwise when `<=` (the window's
 * edge: a seat activated exactly 30 days ago is out of it). Two branches, each gated by the half of the hour,
 * so only one of them reads anything.
 */
function currentHour(metric: string, rows: string, col: string, late: string, shift: string | null, strict: boolean): string {
  const at = (instant: string) => (shift ? `${instant} - ${shift}` : instant);
  const [passed, notPassed] = strict ? ['<', '>='] : ['<=', '>'];
  return `
    SELECT product_id, '${metric}', count(*), 0 FROM ${rows}
      AND NOT ${late} AND ${col} >= ${at(HOUR_START)} AND ${col} ${passed} ${at('now()')} GROUP BY 1
    UNION ALL
    SELECT product_id, '${metric}', -count(*), 0 FROM ${rows}
      AND ${late} AND ${col} ${notPassed} ${at('now()')} AND ${col} < ${at(HOUR_END)} GROUP BY 1`;
}

/**
 * One row per product: its counters summed (metric -> n) and, in every row, how many delta rows that took.
 * Every part is an index range (see the StatsReadIndexes and StatsHourly migrations), written as separate branches
 * rather than one OR so the planner reads each by its index, whatever the table's size on disk.
 */
export function productCountersStatement(edge: WindowEdge, products: readonly number[] | null): Sql {
  const late = edge === 'auto' ? IN_LATE_HALF : edge === 'add' ? 'false' : 'true';
  const usable = `usable_license_deadlines WHERE true`;
  const head = `
  WITH summed AS (
    SELECT d.product_id, d.metric, sum(d.n) AS n, count(*) AS delta_rows FROM stats_deltas d
    WHERE d.hour IS NULL GROUP BY 1, 2
    UNION ALL
    SELECT d.product_id, d.metric, sum(d.n), count(*) FROM stats_deltas d
    WHERE d.metric IN ('expires', 'grace_ends', 'activated_ends', 'heartbeat_released_ends')
      AND d.hour < ${HOUR} + CASE WHEN ${late} THEN interval '1 hour' ELSE interval '0 hours' END
    GROUP BY 1, 2
    UNION ALL ${currentHour('expires', usable, 'expires_at', late, null, true)}
    UNION ALL ${currentHour('grace_ends', usable, 'grace_ends_at', late, null, true)}
    UNION ALL ${currentHour('activated_ends', 'seat_history WHERE true', 'activated_at', late, WINDOW, false)}
    UNION ALL ${currentHour('heartbeat_released_ends', `seat_history WHERE release_reason = 'heartbeat_timeout'`, 'released_at', late, WINDOW, false)}
  )
  SELECT p.id AS product_id, p.code AS product_code, p.name AS product_name,
         coalesce((SELECT jsonb_object_agg(m.metric, m.n) FROM (
           SELECT s.metric, sum(s.n)::bigint AS n FROM summed s WHERE s.product_id = p.id GROUP BY s.metric
         ) m), '{}'::jsonb) AS counts,
         (SELECT coalesce(sum(delta_rows), 0) FROM summed) AS delta_rows
  FROM product_catalog p `;
  return sql`${raw(head)}${products ? sql`WHERE p.id = ANY(${products}::int[])` : raw('')} ORDER BY p.id`;
}

/** The text of productCountersStatement for every product (it has no parameter), for tests that run it on their own. */
export const productCountersSql = (edge: WindowEdge = 'auto'): string => productCountersStatement(edge, null).compile().text;

/** StatsRepository.compact's one statement (a function so a test can run it on its own connection): returns `kept`. */
export function compactSql(): string {
  return `
    WITH moved AS (
      DELETE FROM stats_deltas d
      WHERE d.hour IS NULL OR d.hour < ${HOUR} - interval '1 hour' OR (d.product_id, d.metric, d.hour) IN (
        SELECT product_id, metric, hour FROM stats_deltas WHERE hour >= ${HOUR} - interval '1 hour'
        GROUP BY 1, 2, 3 HAVING count(*) > 1
      )
      RETURNING product_id, metric, hour, n
    ),
    folded AS (
      INSERT INTO stats_deltas (product_id, metric, hour, n)
      SELECT product_id, metric, hour, sum(n) FROM (
        SELECT product_id, metric, n, CASE WHEN hour < ${HOUR} - interval '1 hour' THEN ${HOUR} - interval '2 hours' ELSE hour END AS hour
        FROM moved
      ) m
      GROUP BY 1, 2, 3 HAVING sum(n) <> 0
      RETURNING 1
    )
    SELECT ((SELECT count(*) FROM stats_deltas) - (SELECT count(*) FROM moved) + (SELECT count(*) FROM folded))::int AS kept`;
}

/**
 * Statistics from counters that triggers keep in the writing transactions (stats_deltas), so they
 * are exact at the moment of the request without scanning every licence: hour-bucketed metrics are
 * summed for the hours before the current one, and the current hour's part is counted from the indexed rows.
 * Style: named SQL with typed rows; it reads only stats_deltas and the views of the licences and products modules
 * (docs/architecture.md, Database style).
 */
@Injectable()
export class StatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One row per product (every product, in id order), and how many delta rows were summed. */
  async productCounters(products: ProductScope = ALL_PRODUCTS): Promise<{ rows: ProductCountersRow[]; deltaRows: number }> {
    const rows = await runStatement<ProductCountersRow & { delta_rows: string }>(
      this.dataSource.manager,
      products ? 'product-stats-scoped' : 'product-stats',
      productCountersStatement('auto', products),
    );
    return { rows: rows.map(({ delta_rows: _, ...row }) => row), deltaRows: Number(rows[0]?.delta_rows ?? 0) };
  }

  /** Trials started and converted per product id (docs/licences.md, Trials), from the licences module's trial_counts view. */
  async trialCounts(): Promise<Map<number, { started: number; converted: number }>> {
    const rows = await runStatement<{ product_id: number; started: string; converted: string }>(
      this.dataSource.manager,
      'trial-counts',
      sql`SELECT product_id, started, converted FROM trial_counts`,
    );
    return new Map(rows.map((r) => [r.product_id, { started: Number(r.started), converted: Number(r.converted) }]));
  }

  /**
   * Folds the deltas into one row per product, metric and hour, dropping zeros: the hours before the previous one
   * merge into one row (reads sum every hour before the current one anyway). Only the rows that fold are rewritten
   * (undated, past, or sharing their hour with another row); a future hour's single row stays where it is. One
   * statement, so readers see the sums before or after, never half; rows of transactions still in flight are not
   * touched. Returns the rows the table holds after it.
   */
  async compact(): Promise<number> {
    const [{ kept }] = await runStatement<{ kept: number }>(this.dataSource.manager, 'stats-compact', raw(compactSql()));
    return kept;
  }

  /** Usable licences (not revoked or suspended) expiring from `from` to before `to`, counted per UTC day of their expiry. */
  async expiringPerDay(from: Date, to: Date, products: readonly number[] | null): Promise<{ day: string; n: number }[]> {
    // Past `from` (now), as the list of licences expiring soon counts them, so the chart and the list agree.
    const productsParam = param(products);
    const rows = await runStatement<{ day: string; n: string }>(
      this.dataSource.manager,
      'stats-expiring-per-day',
      sql`SELECT to_char(date_trunc('day', expires_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, count(*) AS n
       FROM usable_license_deadlines WHERE expires_at > ${from} AND expires_at < ${to}
         AND (${productsParam}::int[] IS NULL OR product_id = ANY(${productsParam}::int[])) GROUP BY 1`,
    );
    return rows.map((row) => ({ day: row.day, n: Number(row.n) }));
  }

  /** The planner's idea of the table's size: free to ask, good enough to decide when to fold. */
  async estimatedDeltaRows(): Promise<number> {
    const [row] = await runStatement<{ n: string }>(
      this.dataSource.manager,
      'stats-estimated-delta-rows',
      sql`SELECT greatest(reltuples, 0)::bigint AS n FROM pg_class WHERE oid = 'stats_deltas'::regclass`,
    );
    return Number(row?.n ?? 0);
  }
}
