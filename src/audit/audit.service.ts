import { Injectable } from '@nestjs/common';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import type { ExportSource, ExportValue } from '../common/http/export';
import { decodeCursor } from '../common/http/keyset-cursor';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { countsByDay, utcDays } from '../common/utc-days';
import { parseIsoTimestamp } from '../common/validation/iso-timestamp';
import { AuditEntryRow, AuditFilter, AuditRepository } from './audit.repository';
import { AuditEntryDto } from './dto/audit-entry.dto';
import type { AuditQueryDto } from './dto/audit-query.dto';

/** How far back a refusal counts as recent: the dashboard's markers and the licence page's banner (docs/dashboard.md, Refused recently). */
export const REFUSED_RECENTLY_DAYS = 7;

/** A licence's newest recent refusal: the client's error code, when, and the machine turned away. */
export interface RecentRefusal {
  code: string;
  at: string;
  hostname: string | null;
  machine_fingerprint: string | null;
}

/** Extra filters the dashboard adds to the API's: a customer's licences, and a staff member (`staff:<username>`). */
type AuditQuery = Partial<AuditQueryDto> & { license_ids?: number[]; staff_actor?: string };

/** The audit log's reads (list, export); entries are written by EventRecorder with the event they record (docs/webhooks.md, The event spine). */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  /** A page of entries matching the filters (licence, action, actor type, time range), newest first, with the total. */
  async listEntries(query: AuditQuery, products: ProductScope = ALL_PRODUCTS): Promise<Page<AuditEntryDto>> {
    const filter = auditFilter(query, products);
    const { entries, total, estimated, next } = await this.audit.listPage(
      filter,
      query.limit ?? DEFAULT_PAGE_LIMIT,
      query.offset ?? 0,
      decodeCursor(query.after),
    );
    return { items: entries.map((e) => AuditEntryDto.from(e)), total, estimated, next };
  }

  /**
   * Per UTC day of the last `days` (today included, oldest first), how many entries of each action: every day and
   * action present, zeros included (docs/dashboard.md, Charts); of one licence, or of some products' licences (null:
   * every product).
   */
  async dailyCounts<A extends string>(
    actions: readonly A[],
    days: number,
    within: { licenseId?: number; productIds?: ProductScope } = {},
    now = new Date(),
  ): Promise<{ day: string; counts: Record<A, number> }[]> {
    return this.countsPerDay(actions, utcDays(now, 1 - days, days), within);
  }

  /**
   * Per UTC day of `range` (oldest first), how many entries of each action, of one licence or of some products'
   * licences (null: every product): the daily statistics (docs/licences.md, Daily statistics) and the charts.
   */
  async countsPerDay<A extends string>(
    actions: readonly A[],
    range: { start: Date; end: Date; days: string[] },
    within: { licenseId?: number; productIds?: readonly number[] | null } = {},
  ): Promise<{ day: string; counts: Record<A, number> }[]> {
    const rows = await this.audit.dailyCounts(actions, range.start, { ...within, until: range.end });
    return countsByDay(
      range.days,
      actions,
      rows.map((row) => ({ day: row.day, key: row.action, n: row.n })),
    );
  }

  /**
   * The newest refusal of each of these licences in the last {@link REFUSED_RECENTLY_DAYS} days, by licence id: its
   * code, time and machine (docs/dashboard.md, Refused recently). One query, whatever the number of licences.
   */
  async recentRefusals(licenseIds: readonly number[], now = new Date()): Promise<Map<number, RecentRefusal>> {
    const rows = await this.audit.latestRefusals(licenseIds, new Date(now.getTime() - REFUSED_RECENTLY_DAYS * 86_400_000));
    const text = (value: unknown) => (typeof value === 'string' && value ? value : null);
    return new Map(
      rows.map((r) => [
        r.license_id,
        {
          code: text(r.details.code) ?? 'REFUSED',
          at: r.created_at.toISOString(),
          hostname: text(r.details.hostname),
          machine_fingerprint: text(r.details.machine_fingerprint),
        },
      ]),
    );
  }

  /**
   * The licences refused in the last {@link REFUSED_RECENTLY_DAYS} days, by id, newest refusal first (the map keeps that
   * order), at most `limit`, within the credential's products (docs/dashboard.md, Refused recently).
   */
  async recentlyRefused(limit: number, products: ProductScope = ALL_PRODUCTS, now = new Date()): Promise<Map<number, string>> {
    const rows = await this.audit.refusedSince(new Date(now.getTime() - REFUSED_RECENTLY_DAYS * 86_400_000), limit, products);
    return new Map(rows.map((r) => [Number(r.license_id), r.at.toISOString()]));
  }

  /** Every matching entry, newest first, streamed from a cursor (docs/admin-api.md, Exports); resolves once the first row is read. */
  async exportEntries(query: AuditQuery, products: ProductScope = ALL_PRODUCTS): Promise<ExportSource<AuditEntryRow>> {
    const rows = await this.audit.streamExport(auditFilter(query, products));
    return { rows, columns: AUDIT_EXPORT_COLUMNS, toRecord: auditExportRecord };
  }
}

/** The filters of a query; 400 when `from` is after `to`. */
function auditFilter(query: AuditQuery, products: ProductScope): AuditFilter {
  const from = parseIsoTimestamp(query.from);
  const to = parseIsoTimestamp(query.to);
  if (from && to && from.getTime() > to.getTime()) throw AppError.field('from', 'from must not be after to');
  return {
    productScope: products,
    licenseId: query.license_id,
    licenseIds: query.license_ids,
    action: query.action,
    actorType: query.actor_type,
    actors: query.actor === undefined ? [] : [query.actor],
    actorAnyCase: query.staff_actor,
    productCode: query.product,
    from: query.from,
    to: query.to,
  };
}

export const AUDIT_EXPORT_COLUMNS = [
  'id',
  'created_at',
  'action',
  'actor_type',
  'actor',
  'ip',
  'license_id',
  'product_code',
  'details',
] as const;

function auditExportRecord(r: AuditEntryRow): Record<(typeof AUDIT_EXPORT_COLUMNS)[number], ExportValue> {
  return { ...r, id: Number(r.id) };
}
