import type { EntityManager } from 'typeorm';
import { preparedQuery, statementName } from './prepared-query';

/** Lists count their matches exactly up to this many; beyond it they send PostgreSQL's estimate, flagged as such. */
export const EXACT_COUNT_LIMIT = 1000;

/** A list's total: exact up to EXACT_COUNT_LIMIT, else the planner's row estimate (never below the limit). */
export interface MatchCount {
  total: number;
  estimated: boolean;
}

/** A newest-first list query: rows of `from` ordered by `<alias>.created_at DESC, <alias>.id DESC`. */
export interface PageQuery {
  /** `FROM ... [WHERE ...]`, its placeholders $1..$n bound to `params`. */
  from: string;
  params: unknown[];
  /** The page's select list; must include `<alias>.id` and `<alias>.created_at`. */
  columns: string;
  alias: string;
  limit: number;
  offset: number;
  /** Another order than newest first: inside the page (`<alias>.` columns) and of the page's rows (`page.` columns). */
  order?: { inner: string; outer: string };
}

type CountedRow<Row> = { capped_total: number } & (Row | { [K in keyof Row]: null });

/**
 * One page of the query's rows and the number of matches, from one statement (so one snapshot). The
 * count stops after EXACT_COUNT_LIMIT + 1 rows: its cost is bounded whatever the table size, unlike an
 * exact COUNT(*) over millions of audit entries on every page. The LEFT JOIN keeps the count row when
 * the page is empty.
 */
export async function pagedList<Row extends { id: unknown }>(manager: EntityManager, q: PageQuery): Promise<{ rows: Row[] } & MatchCount> {
  const n = q.params.length;
  const text = `WITH counted AS (SELECT count(*)::int AS n FROM (SELECT 1 ${q.from} LIMIT ${EXACT_COUNT_LIMIT + 1}) capped)
       SELECT counted.n AS capped_total, page.* FROM counted LEFT JOIN (
         SELECT ${q.columns}
         ${q.from} ORDER BY ${q.order?.inner ?? `${q.alias}.created_at DESC, ${q.alias}.id DESC`} LIMIT $${n + 1} OFFSET $${n + 2}
       ) page ON true
       ORDER BY ${q.order?.outer ?? 'page.created_at DESC, page.id DESC'}`;
  const { rows: raw } = await preparedQuery<CountedRow<Row>>(manager, statementName(text), text, [...q.params, q.limit, q.offset]);
  const rows = raw.filter((r): r is { capped_total: number } & Row => r.id !== null);
  return { rows, ...(await matchCount(manager, raw[0].capped_total, q.from, q.params)) };
}

/** Turns a capped count into the list's total, asking the planner (EXPLAIN, no scan) when the cap was hit. */
async function matchCount(manager: EntityManager, cappedCount: number, fromWhere: string, params: unknown[]): Promise<MatchCount> {
  if (cappedCount <= EXACT_COUNT_LIMIT) return { total: cappedCount, estimated: false };
  const [row] = await manager.query<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }[]>(
    `EXPLAIN (FORMAT JSON) SELECT 1 ${fromWhere}`,
    params,
  );
  const estimate = Math.round(Number(row['QUERY PLAN'][0].Plan['Plan Rows']));
  return { total: Math.max(estimate, EXACT_COUNT_LIMIT + 1), estimated: true };
}
