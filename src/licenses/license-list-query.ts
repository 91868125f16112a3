import type { ProductScope } from '../common/auth/actor';
import type { KeysetPosition } from '../common/http/keyset-cursor';
import { joinSql, param, raw, type Sql, sql } from '../database/statement';
import { type LicenseStatus, licenseStatusConditionSql, licenseStatusSql } from './license-status';
import type { LicenseType } from './license-type';

/**
 * Filters of the licence list, combined with AND. `search` is a literal substring, case- and
 * accent-insensitive, of the customer name, e-mail, PIB and the key with or without dashes.
 */
export interface LicenseListFilter {
  productCode?: string;
  /** The credential's products (null: all), ANDed with productCode. */
  productScope?: ProductScope;
  status?: LicenseStatus;
  licenseType?: LicenseType;
  search?: string;
  /** The staff search: `search` also matches a machine's hostname (substring) or fingerprint (prefix), current or past. */
  searchMachines?: boolean;
  /** One customer's licences: exact e-mail (case-insensitive) or PIB. */
  customerEmail?: string;
  customerPib?: string;
  /** Usable licences whose expiry falls within the next N days. */
  expiringWithinDays?: number;
  /** Licences a store made (docs/stores.md), and the one of a store subscription. */
  storeName?: string;
  storeSubscriptionId?: string;
  /** Self-service trials started from this IP address. */
  trialIp?: string;
  /** Only these licences. */
  licenseIds?: readonly number[];
}

export const LICENSE_SORTS = ['created_at', 'expires_at', 'customer_name', 'license_key', 'product', 'license_type', 'status'] as const;
export type LicenseSort = (typeof LICENSE_SORTS)[number];

/** Page options beyond limit/offset: the order (default newest first), the seat counts of each row, the keyset position. */
export interface LicensePageOptions {
  sort?: LicenseSort;
  direction?: 'asc' | 'desc';
  withSeats?: boolean;
  /** Only the rows after this position (newest-first order only). */
  after?: KeysetPosition;
}

export const SORT_SQL: Record<LicenseSort, string> = {
  created_at: 'l.created_at',
  expires_at: 'l.expires_at',
  customer_name: 'lower(l.customer_name)',
  license_key: 'l.license_key',
  product: 'p.code',
  license_type: 'l.license_type',
  status: licenseStatusSql('l'),
};

/** A fingerprint prefix as typed (with or without `sha256:`, any case), or undefined when the text cannot be one. */
export function fingerprintPrefix(text: string): string | undefined {
  const m = /^(?:sha256:)?([0-9a-f]{6,64})$/i.exec(text.trim());
  return m ? `sha256:${m[1].toLowerCase()}` : undefined;
}

/** LIKE treats % _ and \ as special: escape them so the search is literal. */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The search condition: the folded needle as a substring of search_text (trigram-indexed); for the staff
 * search also licences with a machine of that hostname or fingerprint prefix, as a UNION of index scans.
 */
function searchCondition(search: string, machines: boolean): Sql {
  const needle = sql`'%' || license_search_fold(${param(escapeLike(search))}) || '%'`;
  if (!machines) return sql`l.search_text LIKE ${needle}`;
  const fingerprint = fingerprintPrefix(search);
  const byFingerprint = fingerprint
    ? sql`UNION SELECT a.license_id FROM activations a WHERE a.machine_fingerprint LIKE ${fingerprint + '%'}`
    : raw('');
  return sql`l.id IN (SELECT s.id FROM licenses s WHERE s.search_text LIKE ${needle}
    UNION SELECT a.license_id FROM activations a WHERE lower(a.hostname) LIKE '%' || lower(${escapeLike(search)}) || '%'
    ${byFingerprint})`;
}

/** `FROM ... WHERE ...` of the licence list, its bulk selection and its export. */
export function licenseListFrom(filter: LicenseListFilter): Sql {
  const where: Sql[] = [];
  if (filter.productScope) where.push(sql`l.product_id = ANY(${filter.productScope}::int[])`);
  if (filter.productCode !== undefined) where.push(sql`p.code = ${filter.productCode}`);
  if (filter.licenseType !== undefined) where.push(sql`l.license_type = ${filter.licenseType}`);
  if (filter.status !== undefined) where.push(raw(licenseStatusConditionSql('l', filter.status)));
  if (filter.search !== undefined) where.push(searchCondition(filter.search, filter.searchMachines === true));
  // Exact customer matches, narrowed through the trigram-indexed search_text first.
  if (filter.customerEmail !== undefined) {
    const email = param(filter.customerEmail);
    where.push(sql`l.search_text LIKE '%' || license_search_fold(${email}) || '%' AND lower(l.customer_email) = lower(${email})`);
  }
  if (filter.customerPib !== undefined) {
    const pib = param(filter.customerPib);
    where.push(sql`l.search_text LIKE '%' || ${pib} || '%' AND l.customer_pib = ${pib}`);
  }
  if (filter.expiringWithinDays !== undefined) {
    where.push(
      sql`NOT l.revoked AND l.active AND l.expires_at > now() AND l.expires_at <= now() + make_interval(hours => 24 * ${filter.expiringWithinDays}::int)`,
    );
  }
  if (filter.storeName !== undefined) where.push(sql`l.store_name = ${filter.storeName}`);
  if (filter.storeSubscriptionId !== undefined) where.push(sql`l.store_subscription_id = ${filter.storeSubscriptionId}`);
  if (filter.trialIp !== undefined) {
    where.push(sql`EXISTS (SELECT 1 FROM trials tr WHERE tr.license_id = l.id AND tr.ip = ${filter.trialIp})`);
  }
  if (filter.licenseIds !== undefined) where.push(sql`l.id = ANY(${filter.licenseIds}::int[])`);
  // Always a WHERE clause (no top-level OR in any part): the keyset condition is ANDed to it.
  return sql`FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE ${where.length ? joinSql(where, ' AND ') : raw('true')}`;
}
