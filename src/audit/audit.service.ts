import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import type { ExportSource, ExportValue } from '../common/http/export';
import { decodeCursor } from '../common/http/keyset-cursor';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { parseIsoTimestamp } from '../common/validation/iso-timestamp';
import type { AuditAction } from './audit-entry.entity';
import { AuditEntryRow, AuditFilter, AuditRepository } from './audit.repository';
import { AuditEntryDto } from './dto/audit-entry.dto';
import type { AuditQueryDto } from './dto/audit-query.dto';

export interface AuditEvent {
  action: AuditAction;
  actor: Actor;
  licenseId?: number | null;
  productCode?: string | null;
  details?: Record<string, unknown>;
}

/** Runs in the transaction of the audited change, after its entry is written (the webhooks outbox subscribes here). */
export type AuditListener = (event: AuditEvent, manager: EntityManager) => Promise<void>;

/**
 * The audit log: a leaf every module may use. Pass the transaction's manager so the entry commits with the change.
 * Listeners let other modules add to that transaction without the audit log knowing them.
 */
@Injectable()
export class AuditService {
  private readonly listeners: AuditListener[] = [];

  constructor(
    private readonly audit: AuditRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onRecord(listener: AuditListener): void {
    this.listeners.push(listener);
  }

  async record(event: AuditEvent, manager?: EntityManager): Promise<void> {
    // Without a caller's transaction and with listeners, the entry and what they add commit together in one of our own.
    if (!manager && this.listeners.length) return this.dataSource.transaction((own) => this.record(event, own));
    await this.audit.insert(
      {
        action: event.action,
        actorType: event.actor.type,
        actor: event.actor.name?.slice(0, 200) ?? null,
        ip: event.actor.ip?.slice(0, 45) ?? null,
        licenseId: event.licenseId ?? null,
        productCode: event.productCode ?? null,
        details: event.details ?? {},
      },
      manager,
    );
    for (const listener of this.listeners) await listener(event, manager as EntityManager);
  }

  /** A page of entries matching the filters (licence, action, actor type, time range), newest first, with the total. */
  async listEntries(
    query: Partial<AuditQueryDto> & { license_ids?: number[] },
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<Page<AuditEntryDto>> {
    const filter = auditFilter(query, products);
    const { entries, total, estimated, next } = await this.audit.listPage(
      filter,
      query.limit ?? DEFAULT_PAGE_LIMIT,
      query.offset ?? 0,
      decodeCursor(query.after),
    );
    return { items: entries.map((e) => AuditEntryDto.from(e)), total, estimated, next };
  }

  /** Every matching entry, newest first, streamed from a cursor (CONTRACT 13); resolves once the first row is read. */
  async exportEntries(
    query: Partial<AuditQueryDto> & { license_ids?: number[] },
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<ExportSource<AuditEntryRow>> {
    const rows = await this.audit.streamExport(auditFilter(query, products));
    return { rows, columns: AUDIT_EXPORT_COLUMNS, toRecord: auditExportRecord };
  }
}

/** The filters of a query; 400 when `from` is after `to`. */
function auditFilter(query: Partial<AuditQueryDto> & { license_ids?: number[] }, products: ProductScope): AuditFilter {
  const from = parseIsoTimestamp(query.from);
  const to = parseIsoTimestamp(query.to);
  if (from && to && from.getTime() > to.getTime()) throw AppError.field('from', 'from must not be after to');
  return {
    productScope: products,
    licenseId: query.license_id,
    licenseIds: query.license_ids,
    action: query.action,
    actorType: query.actor_type,
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
