import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { parseIsoTimestamp } from '../common/validation/iso-timestamp';
import type { AuditAction } from './audit-entry.entity';
import { AuditRepository } from './audit.repository';
import { AuditEntryDto } from './dto/audit-entry.dto';
import type { AuditQueryDto } from './dto/audit-query.dto';

export interface AuditEvent {
  action: AuditAction;
  actor: Actor;
  licenseId?: number | null;
  productCode?: string | null;
  details?: Record<string, unknown>;
}

/** The audit log: a leaf every module may use. Pass the transaction's manager so the entry commits with the change. */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  async record(event: AuditEvent, manager?: EntityManager): Promise<void> {
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
  }

  /** A page of entries matching the filters (licence, action, actor type, time range), newest first, with the total. */
  async listEntries(query: Partial<AuditQueryDto>): Promise<Page<AuditEntryDto>> {
    const from = parseIsoTimestamp(query.from);
    const to = parseIsoTimestamp(query.to);
    if (from && to && from.getTime() > to.getTime()) throw AppError.field('from', 'from must not be after to');
    const filter = { licenseId: query.license_id, action: query.action, actorType: query.actor_type, from: query.from, to: query.to };
    const { entries, total, estimated } = await this.audit.listPage(filter, query.limit ?? DEFAULT_PAGE_LIMIT, query.offset ?? 0);
    return { items: entries.map((e) => AuditEntryDto.from(e)), total, estimated };
  }
}
