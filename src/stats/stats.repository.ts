import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { preparedQuery } from '../database/prepared-query';

/** Per product: the summed counters (see the StatsCounters migration) by metric, e.g. `type:TRIAL`, `usable`, `expires`, `seats`. */
export interface ProductCountersRow {
  product_code: string;
  product_name: string;
  counts: Record<string, number>;
}

// Day buckets are UTC days. Written inline (not in a CTE) so the planner sees the values: with a CTE it
// misjudged the row counts by 300x and spent more time compiling the query (JIT) than running it.
const TODAY = `(now() AT TIME ZONE 'UTC')::date`;
const TODAY_START = `(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;
const WINDOW_DAY = `((now() - interval '30 days') AT TIME ZONE 'UTC')::date`;
const WINDOW_START = `(now() - interval '30 days')`;
const WINDOW_DAY_START = `(date_trunc('day', (now() - interval '30 days') AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;
const WINDOW_DAY_END = `((date_trunc('day', (now() - interval '30 days') AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC')`;
/** The window starts in the second half of its UTC day: fewer seats lie between it and the day's end than before it. */
const WINDOW_IN_LATE_HALF = `(${WINDOW_START} >= ${WINDOW_DAY_START} + interval '12 hours')`;

/**
 * How the seats bound in the 30-day window are counted at its older edge, where the window starts part-way
 * through a day bucket. Both are exact at any moment: `add` sums the buckets after that day and counts
 * the seats from the window's start to the day's end; `subtract` sums that day's bucket too and takes away
 * the seats from the day's start to the window's start. `auto` (what the server runs) picks the shorter
 * stretch, so the rows counted at the edge are at most half a day's activations.
 */
export type WindowEdge = 'auto' | 'add' | 'subtract';

/**
 * One row per product: its counters summed (metric -> n) and, in every row, how many delta rows that took.
 * Every part is an index range (see the StatsReadIndexes migration), written as separate branches rather
 * than one OR so the planner reads each by its index, whatever the table's size on disk.
 */
export function productCountersSql(edge: WindowEdge = 'auto', scoped = false): string {
  const late = edge === 'auto' ? WINDOW_IN_LATE_HALF : edge === 'add' ? 'true' : 'false';
  const seatsOfProducts = `SELECT l.product_id, count(*) AS n FROM activations a JOIN licenses l ON l.id = a.license_id`;
  return `
  WITH summed AS (
    SELECT d.product_id, d.metric, sum(d.n) AS n, count(*) AS delta_rows FROM stats_deltas d
    WHERE d.day IS NULL GROUP BY 1, 2
    UNION ALL
    SELECT d.product_id, d.metric, sum(d.n), count(*) FROM stats_deltas d
    WHERE d.metric IN ('expires', 'grace_ends') AND d.day < ${TODAY} GROUP BY 1, 2
    UNION ALL
    SELECT d.product_id, d.metric, sum(d.n), count(*) FROM stats_deltas d
    WHERE d.metric = 'activated' AND d.day >= ${WINDOW_DAY} + CASE WHEN ${late} THEN 1 ELSE 0 END GROUP BY 1, 2
    UNION ALL
    SELECT l.product_id, 'expires', count(*), 0 FROM licenses l
    WHERE NOT l.revoked AND l.active AND l.expires_at IS NOT NULL AND l.expires_at >= ${TODAY_START} AND l.expires_at < now()
    GROUP BY 1
    UNION ALL
    SELECT l.product_id, 'grace_ends', count(*), 0 FROM licenses l
    WHERE NOT l.revoked AND l.active AND l.expires_at IS NOT NULL
      AND license_grace_end(l.expires_at, l.grace_days) >= ${TODAY_START} AND license_grace_end(l.expires_at, l.grace_days) < now()
    GROUP BY 1
    UNION ALL
    SELECT product_id, 'activated', n, 0 FROM (
      ${seatsOfProducts}
      WHERE ${late} AND a.activated_at > ${WINDOW_START} AND a.activated_at < ${WINDOW_DAY_END}
      GROUP BY 1
    ) edge_after
    UNION ALL
    SELECT product_id, 'activated', -n, 0 FROM (
      ${seatsOfProducts}
      WHERE NOT ${late} AND a.activated_at >= ${WINDOW_DAY_START} AND a.activated_at <= ${WINDOW_START}
      GROUP BY 1
    ) edge_before
    UNION ALL
    -- Seats of dead machines released in the window, counted from their partial index (activations_heartbeat_released_idx).
    SELECT product_id, 'heartbeat_released', n, 0 FROM (
      ${seatsOfProducts}
      WHERE a.release_reason = 'heartbeat_timeout' AND a.released_at > ${WINDOW_START}
      GROUP BY 1
    ) heartbeat_released
  )
  SELECT p.code AS product_code, p.name AS product_name,
         coalesce((SELECT jsonb_object_agg(m.metric, m.n) FROM (
           SELECT s.metric, sum(s.n)::bigint AS n FROM summed s WHERE s.product_id = p.id GROUP BY s.metric
         ) m), '{}'::jsonb) AS counts,
         (SELECT coalesce(sum(delta_rows), 0) FROM summed) AS delta_rows
  FROM products p ${scoped ? 'WHERE p.code = ANY($1::text[])' : ''} ORDER BY p.id`;
}

const PRODUCT_COUNTERS_SQL = productCountersSql();
/** The same for a credential limited to products: `$1` is their codes. */
const SCOPED_PRODUCT_COUNTERS_SQL = productCountersSql('auto', true);

/**
 * Statistics from counters that triggers keep in the writing transactions (stats_deltas), so they
 * are exact at the moment of the request without scanning every licence: day-bucketed metrics are
 * summed for the days before today, and today's part is counted from the indexed rows themselves.
 */
@Injectable()
export class StatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One row per product (every product, in id order), and how many delta rows were summed. */
  async productCounters(products: ProductScope = ALL_PRODUCTS): Promise<{ rows: ProductCountersRow[]; deltaRows: number }> {
    const { rows } = await preparedQuery<ProductCountersRow & { delta_rows: string }>(
      this.dataSource.manager,
      products ? 'product-stats-scoped' : 'product-stats',
      products ? SCOPED_PRODUCT_COUNTERS_SQL : PRODUCT_COUNTERS_SQL,
      products ? [products] : [],
    );
    return { rows: rows.map(({ delta_rows: _, ...row }) => row), deltaRows: Number(rows[0]?.delta_rows ?? 0) };
  }

  /**
   * Folds the deltas into one row per product, metric and day, dropping zeros and the days no read can
   * need again: bindings of days before the window's first day go, expiry days before yesterday merge into one row
   * (reads sum every day before today anyway). One statement, so readers see the sums before or after,
   * never half; rows of transactions still in flight are not touched. Returns the rows kept.
   */
  async compact(): Promise<number> {
    const [{ kept }] = await this.dataSource.query<{ kept: number }[]>(`
      WITH moved AS (DELETE FROM stats_deltas RETURNING product_id, metric, day, n),
      folded AS (
        INSERT INTO stats_deltas (product_id, metric, day, n)
        SELECT product_id, metric, day, sum(n) FROM (
          SELECT product_id, metric, n,
                 CASE WHEN metric IN ('expires', 'grace_ends') AND day < ${TODAY} - 1 THEN ${TODAY} - 2 ELSE day END AS day
          FROM moved WHERE NOT (metric = 'activated' AND day < ${WINDOW_DAY})
        ) m
        GROUP BY 1, 2, 3 HAVING sum(n) <> 0
        RETURNING 1
      )
      SELECT count(*)::int AS kept FROM folded`);
    return kept;
  }

  /** The planner's idea of the table's size: free to ask, good enough to decide when to fold. */
  async estimatedDeltaRows(): Promise<number> {
    const [row] = await this.dataSource.query<{ n: string }[]>(
      `SELECT greatest(reltuples, 0)::bigint AS n FROM pg_class WHERE oid = 'stats_deltas'::regclass`,
    );
    return Number(row?.n ?? 0);
  }
}
