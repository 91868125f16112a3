import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../database/prepared-query';
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

  /** A prepared plain INSERT: it runs in every activation's transaction, where the ORM's insert builder with RETURNING cost a lot per call. */
  async insert(entry: NewAuditEntry, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await preparedQuery(
      manager,
      'audit-insert',
      `INSERT INTO audit_entries (action, actor_type, actor, ip, license_id, product_code, details) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [entry.action, entry.actorType, entry.actor, entry.ip, entry.licenseId, entry.productCode, JSON.stringify(entry.details)],
    );
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
