import type { EntityManager } from 'typeorm';

/** Lists count their matches exactly up to this many; beyond it they send PostgreSQL's estimate, flagged as such. */
export const EXACT_COUNT_LIMIT = 1000;

/** A list's total: exact up to EXACT_COUNT_LIMIT, else the planner's row estimate (never below the limit). */
export interface MatchCount {
  total: number;
  estimated: boolean;
}

/**
 * SQL counting the rows of `fromWhere` (a `FROM ... WHERE ...` clause) but stopping after
 * EXACT_COUNT_LIMIT + 1: its cost is bounded whatever the table size, unlike an exact COUNT(*)
 * over millions of audit entries on every page.
 */
export const cappedCountSql = (fromWhere: string) =>
  `SELECT count(*)::int AS n FROM (SELECT 1 ${fromWhere} LIMIT ${EXACT_COUNT_LIMIT + 1}) capped`;

/** Turns a capped count into the list's total, asking the planner (EXPLAIN, no scan) when the cap was hit. */
export async function matchCount(manager: EntityManager, cappedCount: number, fromWhere: string, params: unknown[]): Promise<MatchCount> {
  if (cappedCount <= EXACT_COUNT_LIMIT) return { total: cappedCount, estimated: false };
  const [row] = await manager.query(`EXPLAIN (FORMAT JSON) SELECT 1 ${fromWhere}`, params);
  const estimate = Math.round(Number(row['QUERY PLAN'][0].Plan['Plan Rows']));
  return { total: Math.max(estimate, EXACT_COUNT_LIMIT + 1), estimated: true };
}
