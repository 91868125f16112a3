import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import type { ExportSource } from '../common/http/export';
import { decodeCursor } from '../common/http/keyset-cursor';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { ActivationDto } from './dto/activation.dto';
import { LicenseDetailsDto, LicenseListItemDto } from './dto/license.dto';
import { ListLicensesQueryDto } from './dto/list-licenses.query';
import { License } from './license.entity';
import { LICENSE_EXPORT_COLUMNS, licenseExportRecord, type LicenseExportRow } from './license-export';
import { LicensePageOptions, LicensesRepository } from './licenses.repository';
import { SeatsRepository } from './seats/seats.repository';
import { licenseState, type LicenseState } from './use-cases/license-rules';
/** The dashboard's sort keys, public through the service: a repository stays inside its module (docs/architecture.md, Module boundaries). */
export { LICENSE_SORTS, type LicenseSort } from './licenses.repository';
export { licenseEvent, toLicenseDetails } from './license-details';
import { toLicenseDetails } from './license-details';

/** The most licences one customer address lists in the portal. */
const CUSTOMER_LICENSES_MAX = 200;

/** A licence's stored address against a lower-cased one: case and surrounding spaces do not count. */
export const sameCustomerEmail = (stored: string | null, email: string): boolean =>
  stored !== null && stored.trim().toLowerCase() === email;

export type LicenseListQuery = Partial<ListLicensesQueryDto> & {
  /** The staff search: `q` also matches machines (hostname substring, fingerprint prefix). */
  search_machines?: boolean;
  customer_email?: string;
  customer_pib?: string;
  expiring_within_days?: number;
  /** Only these licences (the dashboard's export of selected rows). */
  ids?: readonly number[];
};

/** A list row with the seat columns the dashboard shows. */
export type LicenseStaffListItem = LicenseListItemDto & { seats_used: number; seat_limit: number; customer_pib: string | null };

/**
 * The licence reads of every door (lists, details, exports, the portal's own licences). Every change is a use case of
 * its own in use-cases/ (docs/architecture.md, Licence use cases).
 */
@Injectable()
export class LicensesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly licenses: LicensesRepository,
    private readonly seats: SeatsRepository,
  ) {}

  /** A page of licences matching the filters (product code, status, type, search text), newest first, with the total (estimated beyond 1000). */
  async listLicenses(query: LicenseListQuery, products: ProductScope = ALL_PRODUCTS): Promise<Page<LicenseListItemDto>> {
    const filter = listFilter(query, products);
    const { rows, total, estimated, next } = await this.licenses.listPage(filter, query.limit ?? DEFAULT_PAGE_LIMIT, query.offset ?? 0, {
      after: decodeCursor(query.after),
    });
    return { items: rows.map((row) => LicenseListItemDto.from(row)), total, estimated, next };
  }

  /** The dashboard's list: the same filters plus the staff ones, any sort order, and seats used of each licence. */
  async listLicensesForStaff(
    query: LicenseListQuery,
    order: Pick<LicensePageOptions, 'sort' | 'direction'> = {},
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<Page<LicenseStaffListItem>> {
    const { rows, total, estimated } = await this.licenses.listPage(
      listFilter(query, products),
      query.limit ?? DEFAULT_PAGE_LIMIT,
      query.offset ?? 0,
      {
        ...order,
        withSeats: true,
      },
    );
    const items = rows.map((r) => ({
      ...LicenseListItemDto.from(r),
      seats_used: r.seatsUsed ?? 0,
      seat_limit: r.seatLimit ?? 1,
      customer_pib: r.customerPib ?? null,
    }));
    return { items, total, estimated };
  }

  /** Key and customer of each licence, by id (unknown ids are left out). */
  async licenseSummaries(
    ids: number[],
  ): Promise<Map<number, { license_key: string; customer_name: string; customer_email: string | null }>> {
    const rows = await this.licenses.summaries([...new Set(ids)]);
    return new Map(rows.map((r) => [r.id, { license_key: r.licenseKey, customer_name: r.customerName, customer_email: r.customerEmail }]));
  }

  /** The id of the licence with this key (normalised: trimmed, upper-cased, dashes optional), or undefined. */
  async findIdByKey(key: string): Promise<number | undefined> {
    const compact = key.trim().toUpperCase().replace(/[\s-]/g, '');
    const m = /^([A-Z0-9]{2,8})([0-9A-Z]{20})$/.exec(compact);
    if (!m) return undefined;
    const dashed = `${m[1]}-${m[2].match(/.{5}/g)?.join('-')}`;
    return (await this.licenses.getByKey(dashed))?.id;
  }

  /** Ids of licences whose customer name or e-mail contains the text (accent- and case-insensitive), at most `limit`. */
  idsOfCustomer(text: string, limit = 500): Promise<number[]> {
    return this.licenses.idsOfCustomer(text, limit);
  }

  /** One licence with status, product, merged limits and current seats; 404 NOT_FOUND when unknown. */
  async getLicense(id: number, products: ProductScope = ALL_PRODUCTS): Promise<LicenseDetailsDto> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const license = await this.licenses.getById(id, manager, products);
      if (!license) throw AppError.notFound('License');
      return this.details(license, manager);
    });
  }

  /** Every licence of one customer address (lower-cased), across products, with current seats (docs/portal.md, Isolation). */
  async customerLicenses(email: string): Promise<LicenseDetailsDto[]> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const licenses = await this.licenses.listByCustomerEmail(email, CUSTOMER_LICENSES_MAX, manager);
      return Promise.all(licenses.map((license) => this.details(license, manager)));
    });
  }

  /** Whether any licence carries this customer address (lower-cased). */
  async hasCustomerEmail(email: string): Promise<boolean> {
    return (await this.licenses.listByCustomerEmail(email, 1)).length > 0;
  }

  /** One licence of this customer address (lower-cased); another customer's licence is as unknown as a missing one (404). */
  async customerLicense(id: number, email: string): Promise<LicenseDetailsDto> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const license = await this.licenses.getById(id, manager);
      if (!license || !sameCustomerEmail(license.customerEmail, email)) throw AppError.notFound('License');
      return this.details(license, manager);
    });
  }

  /** The licence with this key (already normalised), as GET shows it; null when there is none. */
  async findLicenseByKey(licenseKey: string): Promise<LicenseDetailsDto | null> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const license = await this.licenses.getByKey(licenseKey, manager);
      return license ? this.details(license, manager) : null;
    });
  }

  /**
   * The licences with these ids within `products` as they are now (unknown ones left out), for a preview that applies
   * the use cases' own rules to them without changing anything (docs/dashboard.md, Bulk actions).
   */
  async licenseStates(ids: readonly number[], products: ProductScope = ALL_PRODUCTS): Promise<Map<number, LicenseState>> {
    const found = await Promise.all([...new Set(ids)].map((id) => this.licenses.getById(id, undefined, products)));
    return new Map(found.filter((l): l is License => l !== null).map((l) => [l.id, licenseState(l)]));
  }

  /** The licence locked for the caller's transaction, as it is before a change (what a bulk item keeps for an undo). */
  async lockedStateIn(manager: EntityManager, id: number, products: ProductScope = ALL_PRODUCTS): Promise<LicenseState> {
    const license = await this.licenses.lockById(id, manager, products);
    if (!license) throw AppError.notFound('License');
    return licenseState(license);
  }

  /** Every activation record of the licence, current and past, newest first; 404 NOT_FOUND when unknown. */
  async listActivations(id: number, products: ProductScope = ALL_PRODUCTS): Promise<ActivationDto[]> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      if (!(await this.licenses.getById(id, manager, products))) throw AppError.notFound('License');
      return (await this.seats.listHistory(id, manager)).map((seat) => ActivationDto.from(seat));
    });
  }

  /**
   * The licences a bulk change covers (docs/dashboard.md, Bulk actions): the given ids that exist within `products`, or
   * every licence matching the list's filters; id order, at most `limit`.
   */
  bulkSelection(
    selection: { ids: readonly number[] } | { query: Omit<LicenseListQuery, 'limit' | 'offset'> },
    limit: number,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<number[]> {
    if ('ids' in selection) return this.licenses.existingIds(selection.ids.slice(0, limit), products);
    return this.licenses.matchingIds(listFilter(selection.query, products), limit);
  }

  /**
   * Every licence matching the list's filters, newest first, streamed from a cursor (docs/admin-api.md, Exports); resolves once
   * the first row is read, so a database failure before then is an ordinary error answer.
   */
  async exportLicenses(
    query: Omit<LicenseListQuery, 'limit' | 'offset'>,
    products: ProductScope = ALL_PRODUCTS,
  ): Promise<ExportSource<LicenseExportRow>> {
    const rows = await this.licenses.streamExport(listFilter(query, products));
    return { rows, columns: LICENSE_EXPORT_COLUMNS, toRecord: licenseExportRecord };
  }

  /** The licence as GET shows it with its product, for an event told about it (the expiry scan), in the caller's transaction. */
  async eventSubjectIn(id: number, manager: EntityManager): Promise<{ productId: number; license: LicenseDetailsDto } | null> {
    const license = await this.licenses.getById(id, manager);
    return license ? { productId: license.productId, license: await this.details(license, manager) } : null;
  }

  private async details(license: License, manager: EntityManager): Promise<LicenseDetailsDto> {
    const seats = await this.seats.listCurrent(license.id, manager);
    return toLicenseDetails(license, seats, new Date());
  }
}

function listFilter(query: Omit<LicenseListQuery, 'limit' | 'offset'>, products: ProductScope = ALL_PRODUCTS) {
  return {
    productScope: products,
    productCode: query.product,
    status: query.status,
    licenseType: query.license_type,
    search: query.q,
    searchMachines: query.search_machines,
    customerEmail: query.customer_email,
    customerPib: query.customer_pib,
    expiringWithinDays: query.expiring_within_days,
    storeName: query.store,
    storeSubscriptionId: query.subscription_id,
    trialIp: query.trial_ip,
    licenseIds: query.ids,
  };
}
