import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { MatchCount, pagedList } from '../database/paged-list';
import { preparedQuery } from '../database/prepared-query';
import type { LicenseListRow } from './dto/license.dto';
import { Product } from '../products/product.entity';
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
    return this.oneWithProduct('license-by-id', 'l.id = $1', [id], manager);
  }

  /** SELECT ... FOR UPDATE on the licence row (the product row, joined in, is not locked). */
  lockById(id: number, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct('license-lock-by-id', 'l.id = $1 FOR UPDATE OF l', [id], manager);
  }

  /** Serialises every seat change of one licence: the basis of race-free seat counting. */
  lockByKey(licenseKey: string, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct('license-lock-by-key', 'l.license_key = $1 FOR UPDATE OF l', [licenseKey], manager);
  }

  insert(license: Partial<License>, manager: EntityManager): Promise<License> {
    return this.repo(manager).save(this.repo(manager).create(license));
  }

  save(license: License, manager: EntityManager): Promise<License> {
    return this.repo(manager).save(license);
  }

  /**
   * One page of matching licences, newest first, with the status computed in SQL, and the number of
   * matches (exact up to EXACT_COUNT_LIMIT, else estimated). Page and count come from one statement,
   * so they see one snapshot.
   */
  async listPage(
    filter: LicenseListFilter,
    limit: number,
    offset: number,
    manager = this.dataSource.manager,
  ): Promise<{ rows: LicenseListRow[] } & MatchCount> {
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    const where: string[] = [];
    if (filter.productCode !== undefined) where.push(`p.code = ${param(filter.productCode)}`);
    if (filter.licenseType !== undefined) where.push(`l.license_type = ${param(filter.licenseType)}`);
    if (filter.status !== undefined) where.push(licenseStatusConditionSql('l', filter.status));
    // search_text is lower(name || email || key), trigram-indexed; lower() the needle the same way.
    if (filter.search !== undefined) where.push(`l.search_text LIKE '%' || lower(${param(escapeLike(filter.search))}) || '%'`);
    const from = `FROM licenses l JOIN products p ON p.id = l.product_id ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
    const columns = `l.id, p.code AS product_code, l.license_key, l.license_type, l.customer_name, l.customer_email, l.expires_at,
                l.active, l.revoked, l.created_at, ${licenseStatusSql('l')} AS status`;
    const page = await pagedList<LicenseListDbRow>(manager, { from, params, columns, alias: 'l', limit, offset });
    return { rows: page.rows.map(licenseListRowFromRow), total: page.total, estimated: page.estimated };
  }

  /**
   * The licence and its product in one round trip, as a prepared statement, mapped by hand: the client API
   * reads them on every call, and the ORM's relation loading cost a second (DISTINCT) query and most of the CPU.
   */
  private async oneWithProduct(
    name: string,
    condition: string,
    params: unknown[],
    manager = this.dataSource.manager,
  ): Promise<License | null> {
    const { rows } = await preparedQuery<LicenseWithProductRow>(manager, name, `${LICENSE_WITH_PRODUCT} WHERE ${condition}`, params);
    return rows.length ? licenseFromRow(rows[0]) : null;
  }
}

const LICENSE_WITH_PRODUCT = `SELECT l.id, l.product_id, l.license_key, l.license_type, l.customer_name, l.customer_email, l.customer_pib,
    l.limits, l.features, l.grace_days, l.notes, l.expires_at, l.active, l.revoked, l.revoked_at, l.revoke_reason,
    l.created_at, l.updated_at, p.code AS p_code, p.name AS p_name, p.key_prefix AS p_key_prefix,
    p.default_limits AS p_default_limits, p.available_features AS p_available_features, p.active AS p_active,
    p.created_at AS p_created_at, p.updated_at AS p_updated_at
  FROM licenses l JOIN products p ON p.id = l.product_id`;

/** A licenses row as pg returns it (timestamptz as Date, jsonb parsed); search_text is never read. */
interface LicenseRow {
  id: number;
  product_id: number;
  license_key: string;
  license_type: LicenseType;
  customer_name: string;
  customer_email: string | null;
  customer_pib: string | null;
  limits: Record<string, number>;
  features: string[];
  grace_days: number;
  notes: string | null;
  expires_at: Date | null;
  active: boolean;
  revoked: boolean;
  revoked_at: Date | null;
  revoke_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The licence's product, joined in with a `p_` prefix (its id is the licence's product_id). */
interface JoinedProductColumns {
  p_code: string;
  p_name: string;
  p_key_prefix: string;
  p_default_limits: Record<string, number>;
  p_available_features: string[];
  p_active: boolean;
  p_created_at: Date;
  p_updated_at: Date;
}

type LicenseWithProductRow = LicenseRow & JoinedProductColumns;

/** A list row: some licence columns, the product's code and the status computed in SQL. */
type LicenseListDbRow = Pick<
  LicenseRow,
  'id' | 'license_key' | 'license_type' | 'customer_name' | 'customer_email' | 'expires_at' | 'active' | 'revoked' | 'created_at'
> & { product_code: string; status: LicenseStatus };

function licenseListRowFromRow(r: LicenseListDbRow): LicenseListRow {
  return {
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
  };
}

function licenseFromRow(r: LicenseWithProductRow): License {
  const product = Object.assign(new Product(), {
    id: r.product_id,
    code: r.p_code,
    name: r.p_name,
    keyPrefix: r.p_key_prefix,
    defaultLimits: r.p_default_limits,
    availableFeatures: r.p_available_features,
    active: r.p_active,
    createdAt: r.p_created_at,
    updatedAt: r.p_updated_at,
  });
  return Object.assign(new License(), {
    id: r.id,
    productId: r.product_id,
    product,
    licenseKey: r.license_key,
    licenseType: r.license_type,
    customerName: r.customer_name,
    customerEmail: r.customer_email,
    customerPib: r.customer_pib,
    limits: r.limits,
    features: r.features,
    graceDays: r.grace_days,
    notes: r.notes,
    expiresAt: r.expires_at,
    active: r.active,
    revoked: r.revoked,
    revokedAt: r.revoked_at,
    revokeReason: r.revoke_reason,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}
