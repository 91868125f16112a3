import type { EntityManager } from 'typeorm';
import type { KeysetPosition } from '../common/http/keyset-cursor';
import { preparedQuery, statementName } from './prepared-query';
import type { Sql } from './statement';

/** Lists count their matches exactly up to this many; beyond it they send PostgreSQL's estimate, flagged as such. */
export const EXACT_COUNT_LIMIT = 1000;

/** A list's total: exact up to EXACT_COUNT_LIMIT, else the planner's row estimate (never below the limit). */
export interface MatchCount {
  total: number;
  estimated: boolean;
}

/** A newest-first list query: rows of `from` ordered by `<alias>.created_at DESC, <alias>.id DESC`. */
export interface PageQuery {
  /** `FROM ... WHERE ...` (`WHERE true` without filters; no top-level OR), built with the `sql` tag. The keyset condition is ANDed to it. */
  from: Sql;
  /** The page's select list; must include `<alias>.id` and `<alias>.created_at`. */
  columns: string;
  alias: string;
  limit: number;
  offset: number;
  /** Keyset paging: only the rows after this position in newest-first order (not with `order`). */
  after?: KeysetPosition;
  /** Another order than newest first (then no `next`): inside the page (`<alias>.` columns) and of the page's rows (`page.` columns). */
  order?: { inner: string; outer: string };
}

type CountedRow<Row> = { capped_total: number; keyset_created_at: string | null } & (Row | { [K in keyof Row]: null });

/** created_at as text with all its microseconds (a JavaScript Date keeps milliseconds): the cursor's half of the key. */
const keysetCreatedAt = (alias: string) => `to_char(${alias}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * One page of the query's rows and the number of matches, from one statement (so one snapshot). The
 * count stops after EXACT_COUNT_LIMIT + 1 rows: its cost is bounded whatever the table size, unlike an
 * exact COUNT(*) over millions of audit entries on every page. The LEFT JOIN keeps the count row when
 * the page is empty. The count ignores `after` (it is the filter's matches, on every page).
 *
 * The page reads limit + 1 rows: when the extra one exists, `next` is the position of the page's last row,
 * where the next page starts. With `after`, the page is `(created_at, id) < (cursor)` in the
 * (created_at DESC, id DESC) order of the list's indexes: an index range, however deep the page.
 */
export async function pagedList<Row extends { id: unknown }>(
  manager: EntityManager,
  q: PageQuery,
): Promise<{ rows: Row[]; next?: KeysetPosition } & MatchCount> {
  if (q.after && q.order) throw new Error('pagedList: keyset paging is only for the newest-first order');
  // The page's parameters follow the filter's: its text is compiled first, with $1..$n.
  const { text: from, values } = q.from.compile();
  const params = [...values, q.limit + 1, q.offset];
  const n = values.length;
  const keyset = q.after
    ? ` AND (${q.alias}.created_at, ${q.alias}.id) < ($${params.push(q.after.createdAt)}::timestamptz, $${params.push(q.after.id)}::bigint)`
    : '';
  const text = `WITH counted AS (SELECT count(*)::int AS n FROM (SELECT 1 ${from} LIMIT ${EXACT_COUNT_LIMIT + 1}) capped)
       SELECT counted.n AS capped_total, page.* FROM counted LEFT JOIN (
         SELECT ${q.columns}, ${keysetCreatedAt(q.alias)} AS keyset_created_at
         ${from}${keyset} ORDER BY ${q.order?.inner ?? `${q.alias}.created_at DESC, ${q.alias}.id DESC`} LIMIT $${n + 1} OFFSET $${n + 2}
       ) page ON true
       ORDER BY ${q.order?.outer ?? 'page.created_at DESC, page.id DESC'}`;
  const { rows: raw } = await preparedQuery<CountedRow<Row>>(manager, statementName(text), text, params);
  const rows = raw.filter((r): r is { capped_total: number; keyset_created_at: string } & Row => r.id !== null);
  // In another order the last row's (created_at, id) is no position to continue from.
  const last = rows.length > q.limit && !q.order ? rows[q.limit - 1] : undefined;
  return {
    rows: rows.slice(0, q.limit),
    ...(last && { next: { createdAt: last.keyset_created_at, id: String(last.id) } }),
    ...(await matchCount(manager, raw[0].capped_total, from, values)),
  };
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
