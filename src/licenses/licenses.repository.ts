import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Readable } from 'node:stream';
import { DataSource, EntityManager } from 'typeorm';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import type { KeysetPosition } from '../common/http/keyset-cursor';
import { MatchCount, pagedList } from '../database/paged-list';
import { openRowStream } from '../database/row-stream';
import { param, raw, runAssembled, runStatement, type Sql, sql } from '../database/statement';
import type { LicenseListRow } from './dto/license.dto';
import { License } from './license.entity';
import type { ExpiryKind } from './license-expiry-notice.entity';
import {
  escapeLike,
  type LicenseListFilter,
  licenseListFrom,
  type LicensePageOptions,
  type LicenseSort,
  SORT_SQL,
} from './license-list-query';
import {
  LICENSE_LIST_ROWS,
  LICENSE_ROWS,
  LICENSE_WITH_PRODUCT,
  type LicenseListDbRow,
  licenseFromRow,
  type LicenseRow,
  type LicenseWithProductRow,
} from './license-rows';
import { licenseStatusSql } from './license-status';

// The list's filters and sorts live with their SQL (license-list-query.ts); callers keep importing them from here.
export { LICENSE_SORTS, type LicenseListFilter, type LicensePageOptions, type LicenseSort } from './license-list-query';

/** The product scope of a credential: every product (null), else only the licences of these product ids. */
const inProductScope = (products: ProductScope): Sql => {
  const ids = param(products);
  return sql`(${ids}::int[] IS NULL OR l.product_id = ANY(${ids}::int[]))`;
};

/**
 * Narrow, named queries on licences; every method takes the caller's transaction when it has one. Style: named SQL
 * with typed rows (LicenseRow), read through their row shapes; it names only the licences module's tables and the products module's
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
    return this.oneWithProduct('license-by-id-in-scope', sql`l.id = ${id} AND ${inProductScope(products)}`, manager);
  }

  getByKey(licenseKey: string, manager?: EntityManager): Promise<License | null> {
    return this.oneWithProduct('license-by-key', sql`l.license_key = ${licenseKey}`, manager);
  }

  /** SELECT ... FOR UPDATE on the licence row (the product row, joined in, is not locked). */
  lockById(id: number, manager: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<License | null> {
    return this.oneWithProduct('license-lock-by-id-in-scope', sql`l.id = ${id} AND ${inProductScope(products)} FOR UPDATE OF l`, manager);
  }

  /** The licence a store subscription made, locked (docs/stores.md). */
  lockByStoreSubscription(store: string, subscriptionId: string, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct(
      'license-lock-by-store-subscription',
      sql`l.store_name = ${store} AND l.store_subscription_id = ${subscriptionId} FOR UPDATE OF l`,
      manager,
    );
  }

  /** The licence a store order made (its first order), locked: a store that sends an order and its subscription apart. */
  lockByStoreOrder(store: string, orderId: string, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct(
      'license-lock-by-store-order',
      sql`l.store_name = ${store} AND l.store_order_id = ${orderId} ORDER BY l.id LIMIT 1 FOR UPDATE OF l`,
      manager,
    );
  }

  /** Serialises every seat change of one licence: the basis of race-free seat counting. */
  lockByKey(licenseKey: string, manager: EntityManager): Promise<License | null> {
    return this.oneWithProduct('license-lock-by-key', sql`l.license_key = ${licenseKey} FOR UPDATE OF l`, manager);
  }

  /**
   * Inserts a new licence (flags and revocation at their defaults); null when its key is taken already (the caller draws
   * another: LicenseCreation). The returned licence has no product joined in.
   */
  async insert(license: NewLicense, manager: EntityManager): Promise<License | null> {
    const l = license;
    const createdAt = param(l.createdAt);
    const rows = await runStatement<LicenseRow>(
      manager,
      'license-insert',
      sql`INSERT INTO licenses (product_id, license_key, license_type, customer_name, customer_email, customer_pib, limits, features,
         policy, grace_days, notes, expires_at, created_at, updated_at, converted_from, store_name, store_customer_id, store_subscription_id, store_order_id)
       VALUES (${l.productId}, ${l.licenseKey}, ${l.licenseType}, ${l.customerName}, ${l.customerEmail}, ${l.customerPib},
         ${JSON.stringify(l.limits)}::jsonb, ${JSON.stringify(l.features)}::jsonb, ${JSON.stringify(l.policy)}::jsonb, ${l.graceDays},
         ${l.notes}, ${l.expiresAt}, ${createdAt}, ${createdAt}, ${l.convertedFrom ?? null}, ${l.storeName ?? null},
         ${l.storeCustomerId ?? null}, ${l.storeSubscriptionId ?? null}, ${l.storeOrderId ?? null})
       ON CONFLICT (license_key) DO NOTHING
       RETURNING ${raw(LICENSE_ROWS.columns)}`,
    );
    return rows.length ? LICENSE_ROWS.fromRow(rows[0]) : null;
  }

  /** Writes every changeable column of a locked licence and stamps updated_at; returns it as stored, its product kept. */
  async save(license: License, manager: EntityManager): Promise<License> {
    const l = license;
    const rows = await runStatement<LicenseRow>(
      manager,
      'license-update',
      sql`UPDATE licenses SET license_type = ${l.licenseType}, customer_name = ${l.customerName}, customer_email = ${l.customerEmail},
         customer_pib = ${l.customerPib}, limits = ${JSON.stringify(l.limits)}::jsonb, features = ${JSON.stringify(l.features)}::jsonb,
         policy = ${JSON.stringify(l.policy)}::jsonb, grace_days = ${l.graceDays}, notes = ${l.notes}, expires_at = ${l.expiresAt},
         active = ${l.active}, revoked = ${l.revoked}, revoked_at = ${l.revokedAt}, revoke_reason = ${l.revokeReason},
         store_subscription_ended_at = ${l.storeSubscriptionEndedAt ?? null}, store_subscription_id = ${l.storeSubscriptionId ?? null}, updated_at = now()
       WHERE id = ${l.id} RETURNING ${raw(LICENSE_ROWS.columns)}`,
    );
    return Object.assign(LICENSE_ROWS.fromRow(rows[0]), { product: license.product });
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
    const from = licenseListFrom(filter);
    const dir = options.direction === 'asc' ? 'ASC' : 'DESC';
    const order = options.sort && options.sort !== 'created_at' ? `${SORT_SQL[options.sort]} ${dir} NULLS LAST, ` : '';
    const createdDir = options.sort === 'created_at' ? dir : 'DESC';
    const seats = options.withSeats
      ? `, (SELECT count(*)::int FROM activations a WHERE a.license_id = l.id AND a.released_at IS NULL) AS seats_used,
         license_seat_limit(p.default_limits, l.limits) AS seat_limit,
         l.customer_pib`
      : '';
    const columns = `${LICENSE_LIST_ROWS.columnsOf('l')}${order ? `, ${SORT_SQL[options.sort as LicenseSort]} AS sort_key` : ''}${seats}`;
    // Newest first (the API's only order) is pagedList's own, the one keyset paging continues.
    const newestFirst = !order && createdDir === 'DESC';
    const page = await pagedList<LicenseListDbRow & { seats_used?: number; seat_limit?: number; customer_pib?: string | null }>(manager, {
      from,
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
      ...LICENSE_LIST_ROWS.fromRow(r),
      ...(options.withSeats ? { seatsUsed: r.seats_used, seatLimit: r.seat_limit, customerPib: r.customer_pib } : {}),
    }));
    return { rows, total: page.total, estimated: page.estimated, next: page.next };
  }

  /** Key and customer of each of the licences (for lists of other things that name licences, like the audit log). */
  async summaries(ids: number[]): Promise<{ id: number; licenseKey: string; customerName: string; customerEmail: string | null }[]> {
    if (ids.length === 0) return [];
    const rows = await runStatement<{ id: number; license_key: string; customer_name: string; customer_email: string | null }>(
      this.dataSource.manager,
      'licenses-summaries',
      sql`SELECT id, license_key, customer_name, customer_email FROM licenses WHERE id = ANY(${ids}::int[])`,
    );
    return rows.map((r) => ({ id: r.id, licenseKey: r.license_key, customerName: r.customer_name, customerEmail: r.customer_email }));
  }

  /**
   * The licences of one customer address (given lower-cased; stored case and surrounding spaces ignored), newest first,
   * at most `limit`; narrowed through the trigram-indexed search_text first (docs/portal.md, Isolation).
   */
  async listByCustomerEmail(email: string, limit: number, manager = this.dataSource.manager): Promise<License[]> {
    const rows = await runStatement<LicenseWithProductRow>(
      manager,
      'licenses-list-by-customer-email',
      sql`${raw(LICENSE_WITH_PRODUCT)} WHERE l.search_text LIKE '%' || license_search_fold(${escapeLike(email)}) || '%' AND lower(btrim(l.customer_email)) = ${email}
       ORDER BY l.created_at DESC, l.id DESC LIMIT ${limit}`,
    );
    return rows.map(licenseFromRow);
  }

  /** Ids of the licences whose customer name or e-mail contains `text` (folded), at most `limit`. */
  async idsOfCustomer(text: string, limit: number): Promise<number[]> {
    const needle = param(escapeLike(text));
    const rows = await runStatement<{ id: number }>(
      this.dataSource.manager,
      'licenses-ids-of-customer',
      sql`SELECT l.id FROM licenses l WHERE l.search_text LIKE '%' || license_search_fold(${needle}) || '%'
         AND license_search_fold(l.customer_name || ' ' || coalesce(l.customer_email, '')) LIKE '%' || license_search_fold(${needle}) || '%'
       ORDER BY l.id DESC LIMIT ${limit}`,
    );
    return rows.map((r) => r.id);
  }

  /** The ids among `ids` of licences that exist within `products`, in id order. */
  async existingIds(ids: readonly number[], products: ProductScope = ALL_PRODUCTS): Promise<number[]> {
    const rows = await runStatement<{ id: number }>(
      this.dataSource.manager,
      'licenses-existing-ids',
      sql`SELECT l.id FROM licenses l WHERE l.id = ANY(${ids}::int[]) AND ${inProductScope(products)} ORDER BY l.id`,
    );
    return rows.map((r) => r.id);
  }

  /** The ids of the licences matching the list's filters, in id order, at most `limit` (docs/dashboard.md, Bulk actions). */
  async matchingIds(filter: LicenseListFilter, limit: number): Promise<number[]> {
    const rows = await runAssembled<{ id: number }>(
      this.dataSource.manager,
      sql`SELECT l.id ${licenseListFrom(filter)} ORDER BY l.id LIMIT ${limit}`,
    );
    return rows.map((r) => r.id);
  }

  /**
   * Every matching licence, newest first, as a stream read from a server-side cursor (docs/admin-api.md, Exports). Opens when
   * the query has produced its first row (or none), so a failure before then is an ordinary error.
   */
  streamExport(filter: LicenseListFilter): Promise<Readable> {
    const statement = sql`SELECT l.id, p.code AS product_code, l.license_key, l.license_type, ${raw(licenseStatusSql('l'))} AS status,
        l.customer_name, l.customer_email, l.customer_pib, l.features, l.limits, l.grace_days, l.expires_at, l.active,
        l.revoked_at, l.revoke_reason, l.notes, l.created_at, l.updated_at, l.store_name, l.store_customer_id,
        l.store_subscription_id, l.store_order_id
      ${licenseListFrom(filter)} ORDER BY l.created_at DESC, l.id DESC`;
    return openRowStream(this.dataSource, statement);
  }

  /**
   * The licence and its product in one round trip, as a prepared statement, read by its row shape: the client API
   * reads them on every call, and the ORM's relation loading cost a second (DISTINCT) query and most of the CPU.
   */
  private async oneWithProduct(name: string, condition: Sql, manager = this.dataSource.manager): Promise<License | null> {
    const rows = await runStatement<LicenseWithProductRow>(manager, name, sql`${raw(LICENSE_WITH_PRODUCT)} WHERE ${condition}`);
    return rows.length ? licenseFromRow(rows[0]) : null;
  }
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
