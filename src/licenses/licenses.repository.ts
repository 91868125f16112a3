import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { LicenseListRow } from './dto/license.dto';
import { License } from './license.entity';
import { LicenseStatus, licenseStatusConditionSql, licenseStatusSql } from './license-status';
import type { LicenseType } from './license-type';

/** Filters of the licence list, combined with AND. `search` is a literal, case-insensitive substring. */
export interface LicenseListFilter {
  productCode?: string;
  status?: LicenseStatus;
  licenseType?: LicenseType;
  search?: string;
}

/** LIKE treats % _ and \ as special: escape them so the search is literal. */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Narrow, named queries on licences; every method takes the caller's transaction when it has one. */
@Injectable()
export class LicensesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(License);
  }

  getById(id: number, manager?: EntityManager): Promise<License | null> {
    return this.repo(manager).findOne({ where: { id }, relations: { product: true } });
  }

  getByKey(licenseKey: string, manager?: EntityManager): Promise<License | null> {
    return this.repo(manager).findOne({ where: { licenseKey }, relations: { product: true } });
  }

  /** SELECT ... FOR UPDATE on the licence row (product loaded separately: outer joins cannot be locked). */
  async lockById(id: number, manager: EntityManager): Promise<License | null> {
    const license = await this.repo(manager).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    return license ? this.withProduct(license, manager) : null;
  }

  /** Serialises every seat change of one licence: the basis of race-free seat counting. */
  async lockByKey(licenseKey: string, manager: EntityManager): Promise<License | null> {
    const license = await this.repo(manager).findOne({ where: { licenseKey }, lock: { mode: 'pessimistic_write' } });
    return license ? this.withProduct(license, manager) : null;
  }

  insert(license: Partial<License>, manager: EntityManager): Promise<License> {
    return this.repo(manager).save(this.repo(manager).create(license));
  }

  save(license: License, manager: EntityManager): Promise<License> {
    return this.repo(manager).save(license);
  }

  /** One page of matching licences, newest first, with the status computed in SQL, and the count of all matches. */
  async listPage(filter: LicenseListFilter, limit: number, offset: number, manager?: EntityManager): Promise<{ rows: LicenseListRow[]; total: number }> {
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const where: string[] = [];
    if (filter.productCode !== undefined) where.push(`p.code = ${param(filter.productCode)}`);
    if (filter.licenseType !== undefined) where.push(`l.license_type = ${param(filter.licenseType)}`);
    if (filter.status !== undefined) where.push(licenseStatusConditionSql('l', filter.status));
    // search_text is lower(name || email || key), trigram-indexed; lower() the needle the same way.
    if (filter.search !== undefined) where.push(`l.search_text LIKE '%' || lower(${param(escapeLike(filter.search))}) || '%'`);
    const from = `FROM licenses l JOIN products p ON p.id = l.product_id ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
    const db = manager ?? this.dataSource.manager;
    const [{ total }] = await db.query(`SELECT count(*)::int AS total ${from}`, [...params]);
    const raw: Record<string, any>[] = await db.query(
      `SELECT l.id, p.code AS product_code, l.license_key, l.license_type, l.customer_name, l.customer_email, l.expires_at,
              l.active, l.revoked, l.created_at, ${licenseStatusSql('l')} AS status
       ${from} ORDER BY l.created_at DESC, l.id DESC LIMIT ${param(limit)} OFFSET ${param(offset)}`,
      params,
    );
    const rows = raw.map((r) => ({
      id: r.id,
      productCode: r.product_code,
      licenseKey: r.license_key,
      licenseType: r.license_type,
      customerName: r.customer_name,
      customerEmail: r.customer_email,
      expiresAt: r.expires_at,
      active: r.active,
      revoked: r.revoked,
      status: r.status,
      createdAt: r.created_at,
    }));
    return { rows, total };
  }

  private async withProduct(license: License, manager: EntityManager): Promise<License> {
    const withProduct = await this.repo(manager).findOne({ where: { id: license.id }, relations: { product: true } });
    return withProduct ?? license;
  }
}
