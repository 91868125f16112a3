import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Readable } from 'node:stream';
import { DataSource, EntityManager } from 'typeorm';
import type { ProductScope } from '../common/auth/actor';
import { cappedCountSql, matchCount, MatchCount } from '../database/match-count';
import { preparedQuery, statementName } from '../database/prepared-query';
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

  /** One page of matching entries, newest first, and the number of matches (exact up to EXACT_COUNT_LIMIT, else estimated), from one snapshot. */
  async listPage(
    filter: AuditFilter,
    limit: number,
    offset: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ entries: AuditEntry[] } & MatchCount> {
    const params: unknown[] = [];
    const from = auditFrom(filter, params);
    const param = (value: unknown) => `$${params.push(value)}`;
    const filterParams = [...params];
    const text = `WITH counted AS (${cappedCountSql(from)})
       SELECT counted.n AS capped_total, page.* FROM counted LEFT JOIN (
         SELECT a.id, a.created_at, a.action, a.actor_type, a.actor, a.ip, a.license_id, a.product_code, a.details
         ${from} ORDER BY a.created_at DESC, a.id DESC LIMIT ${param(limit)} OFFSET ${param(offset)}
       ) page ON true
       ORDER BY page.created_at DESC, page.id DESC`;
    const { rows: raw } = await preparedQuery(manager, statementName(text), text, params);
    const entries = raw
      .filter((r) => r.id !== null)
      .map((r) =>
        Object.assign(new AuditEntry(), {
          id: String(r.id),
          createdAt: r.created_at,
          action: r.action,
          actorType: r.actor_type,
          actor: r.actor,
          ip: r.ip,
          licenseId: r.license_id,
          productCode: r.product_code,
          details: r.details,
        }),
      );
    return { entries, ...(await matchCount(manager, raw[0].capped_total, from, filterParams)) };
  }

  /** Every matching entry, newest first, from a server-side cursor (CONTRACT 13); opens once the first row is read. */
  streamExport(filter: AuditFilter): Promise<Readable> {
    const params: unknown[] = [];
    const text = `SELECT a.id, a.created_at, a.action, a.actor_type, a.actor, a.ip, a.license_id, a.product_code, a.details
      ${auditFrom(filter, params)} ORDER BY a.created_at DESC, a.id DESC`;
    return openRowStream(this.dataSource, text, params);
  }
}

/** `FROM ... WHERE ...` of the audit list and export; pushes its parameters onto `params`. */
function auditFrom(filter: AuditFilter, params: unknown[]): string {
  const param = (value: unknown) => `$${params.push(value)}`;
  const where: string[] = [];
  if (filter.productScope) where.push(`a.product_code = ANY(${param(filter.productScope)}::text[])`);
  if (filter.licenseId !== undefined) where.push(`a.license_id = ${param(filter.licenseId)}`);
  if (filter.licenseIds !== undefined) where.push(`a.license_id = ANY(${param(filter.licenseIds)}::int[])`);
  if (filter.action !== undefined) where.push(`a.action = ${param(filter.action)}`);
  if (filter.actorType !== undefined) where.push(`a.actor_type = ${param(filter.actorType)}`);
  if (filter.from !== undefined) where.push(`a.created_at >= ${param(filter.from)}::timestamptz`);
  if (filter.to !== undefined) where.push(`a.created_at <= ${param(filter.to)}::timestamptz`);
  return `FROM audit_entries a ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
}
