import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
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
const WINDOW_DAY_END = `((date_trunc('day', (now() - interval '30 days') AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC')`;

/**
 * One row per product: its counters summed (metric -> n) and, in every row, how many delta rows that took.
 * Every part is an index range (see the StatsReadIndexes migration), so its cost does not follow the
 * table's size.
 */
export const PRODUCT_COUNTERS_SQL = `
  WITH summed AS (
    SELECT d.product_id, d.metric, sum(d.n) AS n, count(*) AS delta_rows FROM stats_deltas d
    WHERE d.day IS NULL
       OR (d.metric IN ('expires', 'grace_ends') AND d.day < ${TODAY})
       OR (d.metric = 'activated' AND d.day > ${WINDOW_DAY})
    GROUP BY 1, 2
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
    SELECT l.product_id, 'activated', count(*), 0 FROM activations a JOIN licenses l ON l.id = a.license_id
    WHERE a.activated_at > now() - interval '30 days' AND a.activated_at < ${WINDOW_DAY_END}
    GROUP BY 1
  )
  SELECT p.code AS product_code, p.name AS product_name,
         coalesce((SELECT jsonb_object_agg(m.metric, m.n) FROM (
           SELECT s.metric, sum(s.n)::bigint AS n FROM summed s WHERE s.product_id = p.id GROUP BY s.metric
         ) m), '{}'::jsonb) AS counts,
         (SELECT coalesce(sum(delta_rows), 0) FROM summed) AS delta_rows
  FROM products p ORDER BY p.id`;

/**
 * Statistics from counters that triggers keep in the writing transactions (stats_deltas), so they
 * are exact at the moment of the request without scanning every licence: day-bucketed metrics are
 * summed for the days before today, and today's part is counted from the indexed rows themselves.
 */
@Injectable()
export class StatsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One row per product (every product, in id order), and how many delta rows were summed. */
  async productCounters(): Promise<{ rows: ProductCountersRow[]; deltaRows: number }> {
    const { rows } = await preparedQuery<ProductCountersRow & { delta_rows: string }>(this.dataSource.manager, 'product-stats', PRODUCT_COUNTERS_SQL, []);
    return { rows: rows.map(({ delta_rows: _, ...row }) => row), deltaRows: Number(rows[0]?.delta_rows ?? 0) };
  }

  /**
   * Folds the deltas into one row per product, metric and day, dropping zeros and the days no read can
   * need again: bindings older than the 30-day window go, expiry days before yesterday merge into one row
   * (reads sum every day before today anyway). One statement, so readers see the sums before or after,
   * never half; rows of transactions still in flight are not touched. Returns the rows kept.
   */
  async compact(): Promise<number> {
    const [{ kept }] = await this.dataSource.query(`
      WITH moved AS (DELETE FROM stats_deltas RETURNING product_id, metric, day, n),
      folded AS (
        INSERT INTO stats_deltas (product_id, metric, day, n)
        SELECT product_id, metric, day, sum(n) FROM (
          SELECT product_id, metric, n,
                 CASE WHEN metric IN ('expires', 'grace_ends') AND day < ${TODAY} - 1 THEN ${TODAY} - 2 ELSE day END AS day
          FROM moved WHERE NOT (metric = 'activated' AND day <= ${WINDOW_DAY})
        ) m
        GROUP BY 1, 2, 3 HAVING sum(n) <> 0
        RETURNING 1
      )
      SELECT count(*)::int AS kept FROM folded`);
    return kept;
  }

  /** The planner's idea of the table's size: free to ask, good enough to decide when to fold. */
  async estimatedDeltaRows(): Promise<number> {
    const [row] = await this.dataSource.query(`SELECT greatest(reltuples, 0)::bigint AS n FROM pg_class WHERE oid = 'stats_deltas'::regclass`);
    return Number(row?.n ?? 0);
  }
}
