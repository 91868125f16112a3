import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Readable } from 'node:stream';
import { DataSource, EntityManager } from 'typeorm';
import { rowShape, type RowOf } from '../database/row-shape';
import { joinSql, param, raw, runAssembled, runStatement, type Sql, sql } from '../database/statement';
import type { ProductScope } from '../common/auth/actor';
import type { KeysetPosition } from '../common/http/keyset-cursor';
import { MatchCount, pagedList } from '../database/paged-list';
import { openRowStream } from '../database/row-stream';
import { ActorType, AuditAction, AuditEntry } from './audit-entry.entity';

/** Filters of the audit list, combined with AND; `from` and `to` are inclusive ISO timestamps (PostgreSQL keeps their microseconds). */
export interface AuditFilter {
  /** The credential's products (null: all); a restricted credential sees only entries of those products. */
  productScope?: ProductScope;
  licenseId?: number;
  /** Entries of any of these licences (the dashboard's customer filter). */
  licenseIds?: number[];
  action?: AuditAction;
  actorType?: ActorType;
  /** Entries of each of these actors exactly (ANDed: two different ones match nothing); `staff:<username>` is a staff member. */
  actors?: string[];
  /** Entries of this actor in any letter case (the dashboard's staff filter: `staff:<username>`, docs/dashboard.md). */
  actorAnyCase?: string;
  /** Entries of the product with this code now (its licences' and its own); an unknown code matches nothing. */
  productCode?: string;
  from?: string;
  to?: string;
}

/**
 * The audit log (audit_entries; the event recorder appends to it). Style: named SQL with typed rows; a product scope
 * reads the licences module's license_products view (docs/architecture.md, Database style).
 */
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One page of matching entries, newest first (after a keyset position when given), and the number of matches (exact up to EXACT_COUNT_LIMIT, else estimated), from one snapshot. */
  async listPage(
    filter: AuditFilter,
    limit: number,
    offset: number,
    after?: KeysetPosition,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ entries: AuditEntry[]; next?: KeysetPosition } & MatchCount> {
    const from = auditFrom(filter);
    const page = await pagedList<AuditEntryRow>(manager, { from, columns: AUDIT_ENTRY_COLUMNS, alias: 'a', limit, offset, after });
    return { entries: page.rows.map(AUDIT_ENTRY_ROWS.fromRow), total: page.total, estimated: page.estimated, next: page.next };
  }

  /**
   * How many entries of each action fell on each UTC day from `since` on (optionally of one licence): the dashboard's
   * charts (docs/dashboard.md, Charts). Read through the created_at index (or the licence's), one row per day and action.
   */
  async dailyCounts(
    actions: readonly string[],
    since: Date,
    within: { licenseId?: number; productIds?: readonly number[] | null; until?: Date } = {},
  ): Promise<{ day: string; action: string; n: number }[]> {
    const where: Sql[] = [];
    if (within.licenseId !== undefined) where.push(sql`AND a.license_id = ${within.licenseId}`);
    if (within.until !== undefined) where.push(sql`AND a.created_at < ${within.until}`);
    // A product's entries are its licences' (the licences module's license_products view, as the list's scope).
    if (within.productIds) {
      where.push(
        sql`AND a.license_id IN (SELECT lp.license_id FROM license_products lp WHERE lp.product_id = ANY(${within.productIds}::int[]))`,
      );
    }
    const rows = await runAssembled<{ day: string; action: string; n: string }>(
      this.dataSource.manager,
      sql`SELECT to_char(date_trunc('day', a.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, a.action, count(*) AS n
       FROM audit_entries a WHERE a.action = ANY(${actions}::text[]) AND a.created_at >= ${since} ${joinSql(where, ' ')} GROUP BY 1, 2`,
    );
    return rows.map((row) => ({ ...row, n: Number(row.n) }));
  }

  /**
   * Each of these licences' newest refusal (`license.activation_denied`) at or after `since`, in one statement: per
   * licence, its entries read through the licence index (license_id, id), the newest refusal kept (docs/dashboard.md,
   * Refused recently). Ids are not taken as a clock: an entry may carry an earlier time than an older id's.
   */
  async latestRefusals(licenseIds: readonly number[], since: Date): Promise<RefusalRow[]> {
    if (licenseIds.length === 0) return [];
    return runStatement<RefusalRow>(
      this.dataSource.manager,
      'audit-latest-refusals',
      latestRefusalsStatement([...new Set(licenseIds)], since),
    );
  }

  /**
   * The licences refused at or after `since`, newest refusal first, at most `limit` (docs/dashboard.md, Refused recently):
   * read through `audit_entries_action_idx`, within the credential's products.
   */
  async refusedSince(since: Date, limit: number, productScope: ProductScope): Promise<{ license_id: number; at: Date }[]> {
    return runStatement<{ license_id: number; at: Date }>(
      this.dataSource.manager,
      'audit-refused-since',
      refusedSinceStatement(since, limit, productScope),
    );
  }

  /** Every matching entry, newest first, from a server-side cursor (docs/admin-api.md, Exports); opens once the first row is read. */
  streamExport(filter: AuditFilter): Promise<Readable> {
    return openRowStream(
      this.dataSource,
      sql`SELECT ${raw(AUDIT_ENTRY_COLUMNS)} ${auditFrom(filter)} ORDER BY a.created_at DESC, a.id DESC`,
    );
  }
}

/**
 * Staff sign-ins were audited as `auth.login` / `auth.login_failed` before they became `staff.signed_in` /
 * `staff.sign_in_failed`: a filter on an old name still finds them (docs/licences.md, Audit log).
 */
const NOW_CALLED: Partial<Record<AuditAction, AuditAction[]>> = {
  'auth.login': ['staff.signed_in'],
  'auth.login_failed': ['staff.sign_in_failed'],
};

/** The actions an `action` filter matches: itself, and what it is called now when it is an earlier name. */
export const actionsFilteredAs = (action: AuditAction): AuditAction[] => [action, ...(NOW_CALLED[action] ?? [])];

/** `FROM ... WHERE ...` of the audit list and export; pushes its parameters onto `params`. */
function auditFrom(filter: AuditFilter): Sql {
  const where: Sql[] = [];
  if (filter.productScope) {
    // By product id, not the stored product_code: a renamed product's code can name another product later
    // (docs/security.md, Review findings (round 3)). Product entries carry details.product_id, licence entries their licence.
    const ids = param(filter.productScope);
    where.push(
      sql`(a.license_id IN (SELECT lp.license_id FROM license_products lp WHERE lp.product_id = ANY(${ids}::int[])) OR (a.license_id IS NULL AND a.details->>'product_id' = ANY(${ids}::int[]::text[])))`,
    );
  }
  if (filter.licenseId !== undefined) where.push(sql`a.license_id = ${filter.licenseId}`);
  if (filter.licenseIds !== undefined) where.push(sql`a.license_id = ANY(${filter.licenseIds}::int[])`);
  if (filter.action !== undefined) where.push(sql`a.action = ANY(${actionsFilteredAs(filter.action)}::text[])`);
  if (filter.actorType !== undefined) where.push(sql`a.actor_type = ${filter.actorType}`);
  for (const actor of filter.actors ?? []) where.push(sql`a.actor = ${actor}`);
  // ILIKE with its wildcards escaped (a username may hold `_`): the same name in any letter case, nothing more.
  if (filter.actorAnyCase !== undefined) where.push(sql`a.actor ILIKE ${filter.actorAnyCase.replace(/[\\%_]/g, (c) => `\\${c}`)}`);
  if (filter.productCode !== undefined) {
    // The product the code names now, by id as the scope above (docs/licences.md, Audit log): no such product, no entries.
    const product = sql`(SELECT pc.id FROM product_catalog pc WHERE pc.code = ${param(filter.productCode)})`;
    where.push(
      sql`(a.license_id IN (SELECT lp.license_id FROM license_products lp WHERE lp.product_id = ${product}) OR (a.license_id IS NULL AND a.details->>'product_id' = ${product}::text))`,
    );
  }
  if (filter.from !== undefined) where.push(sql`a.created_at >= ${filter.from}::timestamptz`);
  if (filter.to !== undefined) where.push(sql`a.created_at <= ${filter.to}::timestamptz`);
  // Always a WHERE clause (no top-level OR in any part): the keyset condition is ANDed to it.
  return sql`FROM audit_entries a WHERE ${where.length ? joinSql(where, ' AND ') : raw('true')}`;
}

/** An audit_entries row read into an AuditEntry: bigint id as a string, timestamptz as Date, jsonb parsed. */
const AUDIT_ENTRY_ROWS = rowShape(
  () => new AuditEntry(),
  'id, created_at, action, actor_type, actor, ip, license_id, product_code, details',
);

const AUDIT_ENTRY_COLUMNS = AUDIT_ENTRY_ROWS.columnsOf('a');

/** Of the licences `licenseIds`, each one's newest refusal at or after `since`: see {@link AuditRepository.latestRefusals}. */
export const latestRefusalsStatement = (
  licenseIds: readonly number[],
  since: Date,
): Sql => sql`SELECT l.id AS license_id, r.created_at, r.details
  FROM unnest(${licenseIds}::int[]) AS l(id)
  CROSS JOIN LATERAL (
    SELECT a.created_at, a.details FROM audit_entries a
    WHERE a.license_id = l.id AND a.action = 'license.activation_denied' AND a.created_at >= ${since}
    ORDER BY a.created_at DESC, a.id DESC LIMIT 1) r`;

/** Licences refused at or after `since`, within the products (null: all), newest refusal first, at most `limit`. */
export const refusedSinceStatement = (since: Date, limit: number, productScope: ProductScope): Sql =>
  sql`SELECT a.license_id, max(a.created_at) AS at FROM audit_entries a
  WHERE a.action = 'license.activation_denied' AND a.created_at >= ${since} AND a.license_id IS NOT NULL
    AND (${productScope}::int[] IS NULL
      OR a.license_id IN (SELECT lp.license_id FROM license_products lp WHERE lp.product_id = ANY(${productScope}::int[])))
  GROUP BY a.license_id ORDER BY at DESC, a.license_id DESC LIMIT ${limit}`;

/** A licence's newest refusal as {@link AuditRepository.latestRefusals} reads it. */
export interface RefusalRow {
  license_id: number;
  created_at: Date;
  details: Record<string, unknown>;
}

/** An audit_entries row as pg returns it. */
export type AuditEntryRow = RowOf<typeof AUDIT_ENTRY_ROWS>;
