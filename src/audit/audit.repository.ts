import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ActorType, AuditAction, AuditEntry } from './audit-entry.entity';

/** Filters of the audit list, combined with AND; `from` and `to` are inclusive ISO timestamps (PostgreSQL keeps their microseconds). */
export interface AuditFilter {
  licenseId?: number;
  action?: AuditAction;
  actorType?: ActorType;
  from?: string;
  to?: string;
}

export type NewAuditEntry = Pick<AuditEntry, 'action' | 'actorType' | 'actor' | 'ip' | 'licenseId' | 'productCode' | 'details'>;

@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(entry: NewAuditEntry, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.insert(AuditEntry, manager.create(AuditEntry, entry));
  }

  /** One page of matching entries, newest first, and the count of all matches. */
  async listPage(filter: AuditFilter, limit: number, offset: number, manager: EntityManager = this.dataSource.manager): Promise<{ entries: AuditEntry[]; total: number }> {
    const qb = manager.getRepository(AuditEntry).createQueryBuilder('a');
    if (filter.licenseId !== undefined) qb.andWhere('a.license_id = :licenseId', { licenseId: filter.licenseId });
    if (filter.action !== undefined) qb.andWhere('a.action = :action', { action: filter.action });
    if (filter.actorType !== undefined) qb.andWhere('a.actor_type = :actorType', { actorType: filter.actorType });
    if (filter.from !== undefined) qb.andWhere('a.created_at >= :from', { from: filter.from });
    if (filter.to !== undefined) qb.andWhere('a.created_at <= :to', { to: filter.to });
    const total = await qb.getCount();
    const entries = await qb.orderBy('a.created_at', 'DESC').addOrderBy('a.id', 'DESC').limit(limit).offset(offset).getMany();
    return { entries, total };
  }
}
