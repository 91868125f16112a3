import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Readable } from 'node:stream';
import { DataSource, EntityManager } from 'typeorm';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import type { KeysetPosition } from '../common/http/keyset-cursor';
import { MatchCount, pagedList } from '../database/paged-list';
import { preparedQuery } from '../database/prepared-query';
import { runStatement, sql } from '../database/statement';
import { openRowStream } from '../database/row-stream';
import type { LicenseListRow } from './dto/license.dto';
import { Product } from '../products/product.entity';
import { License } from './license.entity';
import type { ExpiryKind } from './license-expiry-notice.entity';
import { LicenseStatus, licenseStatusConditionSql, licenseStatusSql } from './license-status';
import type { LicenseType } from './license-type';
import type { PolicyOverrides } from '../common/seat-policy/license-policy';

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

const SORT_SQL: Record<LicenseSort, string> = {
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

/** `$2` is the product scope: null for every product, else the product ids the credential may see. */
const IN_PRODUCT_SCOPE = '($2::int[] IS NULL OR l.product_id = ANY($2::int[]))';

/** LIKE treats % _ and \ as special: escape them so the search is literal. */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Narrow, named queries on licences; every method takes the caller's transaction when it has one. Style: named SQL
 * with typed rows (LicenseRow), mapped by hand; it names only the licences module's tables and the products module's
 * product_catalog view (docs/architecture.md, Database style).
 */
@Injectable()
export class LicensesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Marks the licences whose time-driven event is due and not told yet (one row per licence, kind and expiry date), in
   * the caller's transaction; returns them. `expired` looks back 2 days only, so a first start does not replay every
   * expiry in history. Counts days of 24 hours like the status rule (docs/licences.md, Status and grace).
   */
  async claimExpiryNotices(
    expiringDays: number,
    limit: number,
    manager: EntityManager,
  ): Promise<{ licenseId: number; kind: ExpiryKind }[]> {
    const rows = await runStatement<{ license_id: number; kind: ExpiryKind }>(
      manager,
      'licenses-claim-expiry-notices',
      sql`WITH due AS (
         SELECT license_id, expires_at, 'expiring_soon' AS kind FROM usable_license_deadlines
         WHERE expires_at > now() AND expires_at <= now() + make_interval(hours => 24 * ${expiringDays}::int)
         UNION ALL
         SELECT license_id, expires_at, 'expired' FROM usable_license_deadlines
         WHERE grace_ends_at < now() AND grace_ends_at > now() - interval '2 days'
       )
       INSERT INTO license_expiry_notices (license_id, kind, expires_at)
       SELECT d.license_id, d.kind, d.expires_at FROM due d
       WHERE NOT EXISTS (SELECT 1 FROM license_expiry_notices n WHERE n.license_id = d.license_id AND n.kind = d.kind AND n.expires_at = d.expires_at)
       ORDER BY d.expires_at LIMIT ${limit}
       ON CONFLICT DO NOTHING
       RETURNING license_id, kind`,
    );
    return rows.map((r) => ({ licenseId: r.license_id, kind: r.kind }));
  }

  /** With a product scope, another product's licence is not found (the scope is part of the query). */
  getById(id: number, manager?: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<License | null> {
    return this.oneWithProduct('license-by-id-in-scope', `l.id = $1 AND ${IN_PRODUCT_SCOPE}`, [id, products], manager);
  }

  getByKey(licenseKey: string, manager?: EntityManager): Promise<License | null> {
    return this.oneWithProduct('license-by-key', 'l.license_key = $1', [licenseKey], manager);
  }

  /** SELECT ... FOR UPDATE on the licence row (the product row, joined in, is not locked). */
  lockById(id: number, manager: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<License | null> {
    return this.oneWithProduct('license-lock-by-id-in-scope', `l.id = $1 AND ${IN_PRODUCT_SCOPE} FOR UPDATE OF l`, [id, products], manager);
  }

  /** The licence a store subscription made, locked (docs/stores.md). */
  lockByStoreSubscription(store: string, subscriptionId: string, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct(
      'license-lock-by-store-subscription',
      'l.store_name = $1 AND l.store_subscription_id = $2 FOR UPDATE OF l',
      [store, subscriptionId],
      manager,
    );
  }

  /** The licence a store order made (its first order), locked: a store that sends an order and its subscription apart. */
  lockByStoreOrder(store: string, orderId: string, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct(
      'license-lock-by-store-order',
      'l.store_name = $1 AND l.store_order_id = $2 ORDER BY l.id LIMIT 1 FOR UPDATE OF l',
      [store, orderId],
      manager,
    );
  }

  /** Serialises every seat change of one licence: the basis of race-free seat counting. */
  lockByKey(licenseKey: string, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct('license-lock-by-key', 'l.license_key = $1 FOR UPDATE OF l', [licenseKey], manager);
  }

  /** A new licence (flags and revocation at their defaults); the returned licence has no product joined in. */
  async insert(license: NewLicense, manager: EntityManager): Promise<License> {
    const { rows } = await preparedQuery<LicenseRow>(
      manager,
      'license-insert',
      `INSERT INTO licenses (product_id, license_key, license_type, customer_name, customer_email, customer_pib, limits, features,
         policy, grace_days, notes, expires_at, created_at, updated_at, converted_from, store_name, store_customer_id, store_subscription_id, store_order_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10, $11, $12, $13, $13, $14, $15, $16, $17, $18)
       RETURNING ${LICENSE_COLUMNS}`,
      [
        license.productId,
        license.licenseKey,
        license.licenseType,
        license.customerName,
        license.customerEmail,
        license.customerPib,
        JSON.stringify(license.limits),
        JSON.stringify(license.features),
        JSON.stringify(license.policy),
        license.graceDays,
        license.notes,
        license.expiresAt,
        license.createdAt,
        license.convertedFrom ?? null,
        license.storeName ?? null,
        license.storeCustomerId ?? null,
        license.storeSubscriptionId ?? null,
        license.storeOrderId ?? null,
      ],
    );
    return licenseOnlyFromRow(rows[0]);
  }

  /** Writes every changeable column of a locked licence and stamps updated_at; returns it as stored, its product kept. */
  /** Ties a store-made licence to the subscription its order was for (docs/stores.md, Connect Lemon Squeezy). */
  async setStoreSubscription(id: number, subscriptionId: string, manager: EntityManager): Promise<void> {
    await manager.query('UPDATE licenses SET store_subscription_id = $2, updated_at = now() WHERE id = $1', [id, subscriptionId]);
  }

  async save(license: License, manager: EntityManager): Promise<License> {
    const { rows } = await preparedQuery<LicenseRow>(
      manager,
      'license-update',
      `UPDATE licenses SET license_type = $2, customer_name = $3, customer_email = $4, customer_pib = $5, limits = $6::jsonb,
         features = $7::jsonb, policy = $8::jsonb, grace_days = $9, notes = $10, expires_at = $11, active = $12, revoked = $13,
         revoked_at = $14, revoke_reason = $15, store_subscription_ended_at = $16, updated_at = now()
       WHERE id = $1 RETURNING ${LICENSE_COLUMNS}`,
      [
        license.id,
        license.licenseType,
        license.customerName,
        license.customerEmail,
        license.customerPib,
        JSON.stringify(license.limits),
        JSON.stringify(license.features),
        JSON.stringify(license.policy),
        license.graceDays,
        license.notes,
        license.expiresAt,
        license.active,
        license.revoked,
        license.revokedAt,
        license.revokeReason,
        license.storeSubscriptionEndedAt ?? null,
      ],
    );
    return Object.assign(licenseOnlyFromRow(rows[0]), { product: license.product });
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
    options: LicensePageOptions = {},
    manager = this.dataSource.manager,
  ): Promise<{ rows: LicenseListRow[]; next?: KeysetPosition } & MatchCount> {
    const params: unknown[] = [];
    const from = licenseListFrom(filter, params);
    const dir = options.direction === 'asc' ? 'ASC' : 'DESC';
    const order = options.sort && options.sort !== 'created_at' ? `${SORT_SQL[options.sort]} ${dir} NULLS LAST, ` : '';
    const createdDir = options.sort === 'created_at' ? dir : 'DESC';
    const seats = options.withSeats
      ? `, (SELECT count(*)::int FROM activations a WHERE a.license_id = l.id AND a.released_at IS NULL) AS seats_used,
         license_seat_limit(p.default_limits, l.limits) AS seat_limit,
         l.customer_pib`
      : '';
    const columns = `l.id, p.code AS product_code, l.license_key, l.license_type, l.customer_name, l.customer_email, l.expires_at,
                l.active, l.revoked, l.created_at, ${licenseStatusSql('l')} AS status${order ? `, ${SORT_SQL[options.sort as LicenseSort]} AS sort_key` : ''}${seats}`;
    // Newest first (the API's only order) is pagedList's own, the one keyset paging continues.
    const newestFirst = !order && createdDir === 'DESC';
    const page = await pagedList<LicenseListDbRow & { seats_used?: number; seat_limit?: number; customer_pib?: string | null }>(manager, {
      from,
      params,
      columns,
      alias: 'l',
      limit,
      offset,
      after: options.after,
      order: newestFirst
        ? undefined
        : {
            inner: `${order}l.created_at ${createdDir}, l.id ${createdDir}`,
            outer: `${order ? `page.sort_key ${dir} NULLS LAST, ` : ''}page.created_at ${createdDir}, page.id ${createdDir}`,
          },
    });
    const rows = page.rows.map((r) => ({
      ...licenseListRowFromRow(r),
      ...(options.withSeats ? { seatsUsed: r.seats_used, seatLimit: r.seat_limit, customerPib: r.customer_pib } : {}),
    }));
    return { rows, total: page.total, estimated: page.estimated, next: page.next };
  }

  /** Key and customer of each of the licences (for lists of other things that name licences, like the audit log). */
  async summaries(ids: number[]): Promise<{ id: number; licenseKey: string; customerName: string; customerEmail: string | null }[]> {
    if (ids.length === 0) return [];
    const rows: { id: number; license_key: string; customer_name: string; customer_email: string | null }[] = await this.dataSource.query(
      'SELECT id, license_key, customer_name, customer_email FROM licenses WHERE id = ANY($1::int[])',
      [ids],
    );
    return rows.map((r) => ({ id: r.id, licenseKey: r.license_key, customerName: r.customer_name, customerEmail: r.customer_email }));
  }

  /**
   * The licences of one customer address (given lower-cased; stored case and surrounding spaces ignored), newest first,
   * at most `limit`; narrowed through the trigram-indexed search_text first (docs/portal.md, Isolation).
   */
  async listByCustomerEmail(email: string, limit: number, manager = this.dataSource.manager): Promise<License[]> {
    const rows: LicenseWithProductRow[] = await manager.query(
      `${LICENSE_WITH_PRODUCT} WHERE l.search_text LIKE '%' || license_search_fold($1) || '%' AND lower(btrim(l.customer_email)) = $2
       ORDER BY l.created_at DESC, l.id DESC LIMIT $3`,
      [escapeLike(email), email, limit],
    );
    return rows.map(licenseFromRow);
  }

  /** Ids of the licences whose customer name or e-mail contains `text` (folded), at most `limit`. */
  async idsOfCustomer(text: string, limit: number): Promise<number[]> {
    const rows: { id: number }[] = await this.dataSource.query(
      `SELECT l.id FROM licenses l WHERE l.search_text LIKE '%' || license_search_fold($1) || '%'
         AND license_search_fold(l.customer_name || ' ' || coalesce(l.customer_email, '')) LIKE '%' || license_search_fold($1) || '%'
       ORDER BY l.id DESC LIMIT $2`,
      [escapeLike(text), limit],
    );
    return rows.map((r) => r.id);
  }

  /** The ids among `ids` of licences that exist within `products`, in id order. */
  async existingIds(ids: readonly number[], products: ProductScope = ALL_PRODUCTS): Promise<number[]> {
    const rows: { id: number }[] = await this.dataSource.query(
      `SELECT l.id FROM licenses l WHERE l.id = ANY($1::int[]) AND ${IN_PRODUCT_SCOPE} ORDER BY l.id`,
      [ids, products],
    );
    return rows.map((r) => r.id);
  }

  /** The ids of the licences matching the list's filters, in id order, at most `limit` (docs/dashboard.md, Bulk actions). */
  async matchingIds(filter: LicenseListFilter, limit: number): Promise<number[]> {
    const params: unknown[] = [];
    const from = licenseListFrom(filter, params);
    const rows: { id: number }[] = await this.dataSource.query(`SELECT l.id ${from} ORDER BY l.id LIMIT $${params.push(limit)}`, params);
    return rows.map((r) => r.id);
  }

  /**
   * Every matching licence, newest first, as a stream read from a server-side cursor (docs/admin-api.md, Exports). Opens when
   * the query has produced its first row (or none), so a failure before then is an ordinary error.
   */
  streamExport(filter: LicenseListFilter): Promise<Readable> {
    const params: unknown[] = [];
    const from = licenseListFrom(filter, params);
    const text = `SELECT l.id, p.code AS product_code, l.license_key, l.license_type, ${licenseStatusSql('l')} AS status,
        l.customer_name, l.customer_email, l.customer_pib, l.features, l.limits, l.grace_days, l.expires_at, l.active,
        l.revoked_at, l.revoke_reason, l.notes, l.created_at, l.updated_at, l.store_name, l.store_customer_id,
        l.store_subscription_id, l.store_order_id
      ${from} ORDER BY l.created_at DESC, l.id DESC`;
    return openRowStream(this.dataSource, text, params);
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

/**
 * The search condition: the folded needle as a substring of search_text (trigram-indexed); for the staff
 * search also licences with a machine of that hostname or fingerprint prefix, as a UNION of index scans.
 */
function searchCondition(search: string, machines: boolean, param: (value: unknown) => string): string {
  const needle = `'%' || license_search_fold(${param(escapeLike(search))}) || '%'`;
  if (!machines) return `l.search_text LIKE ${needle}`;
  const fingerprint = fingerprintPrefix(search);
  const byFingerprint = fingerprint
    ? `UNION SELECT a.license_id FROM activations a WHERE a.machine_fingerprint LIKE ${param(fingerprint + '%')}`
    : '';
  return `l.id IN (SELECT s.id FROM licenses s WHERE s.search_text LIKE ${needle}
    UNION SELECT a.license_id FROM activations a WHERE lower(a.hostname) LIKE '%' || lower(${param(escapeLike(search))}) || '%'
    ${byFingerprint})`;
}

/** `FROM ... WHERE ...` of the licence list and export; pushes its parameters onto `params`. */
function licenseListFrom(filter: LicenseListFilter, params: unknown[]): string {
  const param = (value: unknown) => `$${params.push(value)}`;
  const where: string[] = [];
  if (filter.productScope) where.push(`l.product_id = ANY(${param(filter.productScope)}::int[])`);
  if (filter.productCode !== undefined) where.push(`p.code = ${param(filter.productCode)}`);
  if (filter.licenseType !== undefined) where.push(`l.license_type = ${param(filter.licenseType)}`);
  if (filter.status !== undefined) where.push(licenseStatusConditionSql('l', filter.status));
  if (filter.search !== undefined) where.push(searchCondition(filter.search, filter.searchMachines === true, param));
  // Exact customer matches, narrowed through the trigram-indexed search_text first.
  if (filter.customerEmail !== undefined) {
    const email = param(filter.customerEmail);
    where.push(`l.search_text LIKE '%' || license_search_fold(${email}) || '%' AND lower(l.customer_email) = lower(${email})`);
  }
  if (filter.customerPib !== undefined) {
    const pib = param(filter.customerPib);
    where.push(`l.search_text LIKE '%' || ${pib} || '%' AND l.customer_pib = ${pib}`);
  }
  if (filter.expiringWithinDays !== undefined) {
    where.push(
      `NOT l.revoked AND l.active AND l.expires_at > now() AND l.expires_at <= now() + make_interval(hours => 24 * ${param(filter.expiringWithinDays)}::int)`,
    );
  }
  if (filter.storeName !== undefined) where.push(`l.store_name = ${param(filter.storeName)}`);
  if (filter.storeSubscriptionId !== undefined) where.push(`l.store_subscription_id = ${param(filter.storeSubscriptionId)}`);
  if (filter.trialIp !== undefined) {
    where.push(`EXISTS (SELECT 1 FROM trials tr WHERE tr.license_id = l.id AND tr.ip = ${param(filter.trialIp)})`);
  }
  if (filter.licenseIds !== undefined) where.push(`l.id = ANY(${param(filter.licenseIds)}::int[])`);
  // Always a WHERE clause (no top-level OR in any part): the keyset condition is ANDed to it.
  return `FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE ${where.length ? where.join(' AND ') : 'true'}`;
}

/** What a new licence is given; the rest takes the column defaults. */
export type NewLicense = Pick<
  License,
  | 'productId'
  | 'licenseKey'
  | 'licenseType'
  | 'customerName'
  | 'customerEmail'
  | 'customerPib'
  | 'limits'
  | 'features'
  | 'policy'
  | 'graceDays'
  | 'notes'
  | 'expiresAt'
  | 'createdAt'
> &
  Partial<Pick<License, 'convertedFrom' | 'storeName' | 'storeCustomerId' | 'storeSubscriptionId' | 'storeOrderId'>>;

/** Every licences column the application reads (search_text is the trigger's). */
const LICENSE_COLUMNS = `id, product_id, license_key, license_type, customer_name, customer_email, customer_pib, limits, features, policy,
  grace_days, notes, expires_at, active, revoked, revoked_at, revoke_reason, created_at, updated_at, converted_from, store_name,
  store_customer_id, store_subscription_id, store_order_id, store_subscription_ended_at`;

const LICENSE_WITH_PRODUCT = `SELECT l.id, l.product_id, l.license_key, l.license_type, l.customer_name, l.customer_email, l.customer_pib,
    l.limits, l.features, l.policy, l.grace_days, l.notes, l.expires_at, l.active, l.revoked, l.revoked_at, l.revoke_reason,
    l.created_at, l.updated_at, l.converted_from, l.store_name, l.store_customer_id, l.store_subscription_id, l.store_order_id,
    l.store_subscription_ended_at, p.code AS p_code, p.name AS p_name, p.key_prefix AS p_key_prefix,
    p.default_limits AS p_default_limits, p.default_policy AS p_default_policy, p.available_features AS p_available_features, p.active AS p_active,
    p.created_at AS p_created_at, p.updated_at AS p_updated_at
  FROM licenses l JOIN product_catalog p ON p.id = l.product_id`;

/** A licenses row as pg returns it (timestamptz as Date, jsonb parsed); search_text is never read. */
export interface LicenseRow {
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
  policy: PolicyOverrides;
  created_at: Date;
  updated_at: Date;
  converted_from: number | null;
  store_name?: string | null;
  store_customer_id?: string | null;
  store_subscription_id?: string | null;
  store_order_id?: string | null;
  store_subscription_ended_at?: Date | null;
}

/** A products row as pg returns it. */
export interface ProductRow {
  id: number;
  code: string;
  name: string;
  key_prefix: string;
  default_limits: Record<string, number>;
  available_features: string[];
  default_policy: PolicyOverrides;
  active: boolean;
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
  p_default_policy: PolicyOverrides;
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

export function licenseFromRow(r: LicenseWithProductRow): License {
  const product = Object.assign(new Product(), {
    id: r.product_id,
    code: r.p_code,
    name: r.p_name,
    keyPrefix: r.p_key_prefix,
    defaultLimits: r.p_default_limits,
    defaultPolicy: r.p_default_policy,
    availableFeatures: r.p_available_features,
    active: r.p_active,
    createdAt: r.p_created_at,
    updatedAt: r.p_updated_at,
  });
  return Object.assign(licenseOnlyFromRow(r), { product });
}

/** A licences row as a License, without its product. */
function licenseOnlyFromRow(r: LicenseRow): License {
  return Object.assign(new License(), {
    id: r.id,
    productId: r.product_id,
    licenseKey: r.license_key,
    licenseType: r.license_type,
    customerName: r.customer_name,
    customerEmail: r.customer_email,
    customerPib: r.customer_pib,
    limits: r.limits,
    features: r.features,
    policy: r.policy,
    graceDays: r.grace_days,
    notes: r.notes,
    expiresAt: r.expires_at,
    active: r.active,
    revoked: r.revoked,
    revokedAt: r.revoked_at,
    revokeReason: r.revoke_reason,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    convertedFrom: r.converted_from ?? null,
    storeName: r.store_name ?? null,
    storeCustomerId: r.store_customer_id ?? null,
    storeSubscriptionId: r.store_subscription_id ?? null,
    storeOrderId: r.store_order_id ?? null,
    storeSubscriptionEndedAt: r.store_subscription_ended_at ?? null,
  });
}
