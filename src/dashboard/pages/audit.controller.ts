import { Get, Query, Render, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ACTOR_TYPES, AUDIT_ACTIONS } from '../../audit/audit-entry.entity';
import { AuditService } from '../../audit/audit.service';
import type { AuditEntryDto } from '../../audit/dto/audit-entry.dto';
import { AuditQueryDto, ExportAuditQueryDto } from '../../audit/dto/audit-query.dto';
import { CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { sendExport } from '../../common/http/export';
import { LicensesService } from '../../licenses/licenses.service';
import { ProductsService } from '../../products/products.service';
import { validFilters } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { staffActorName } from '../../staff/staff-actor';
import { StaffService } from '../../staff/staff.service';
import { usernameProblem } from '../../staff/users.service';
import { pageNumber, pagination } from './pagination';

export const AUDIT_PAGE_SIZE = 50;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** A customer filter matching more licences than this names only the newest of them. */
const CUSTOMER_LICENCES = 500;

/** The quick ranges (docs/dashboard.md, Times): whole UTC days ending today, as plain links that keep the other filters. */
export function quickRanges(shown: Record<string, string>, now = new Date()) {
  const day = (offset: number) => new Date(now.getTime() - offset * 86_400_000).toISOString().slice(0, 10);
  const rest = Object.fromEntries(Object.entries(shown).filter(([name]) => name !== 'from' && name !== 'to'));
  return [
    ['Today', 0],
    ['Last 7 days', 6],
    ['Last 30 days', 29],
  ].map(([label, back]) => {
    const range = { from: day(back as number), to: day(0) };
    return {
      label,
      href: `/audit?${new URLSearchParams({ ...rest, ...range }).toString()}`,
      current: shown.from === range.from && shown.to === range.to,
    };
  });
}

/** Entries with the key and customer of their licence, for the Licence and Customer columns. */
export async function withLicenses(entries: AuditEntryDto[], licenses: LicensesService) {
  const summaries = await licenses.licenseSummaries(entries.map((e) => e.license_id).filter((id): id is number => id !== null));
  return entries.map((e) => ({ ...e, license: e.license_id === null ? undefined : summaries.get(e.license_id) }));
}

/** What the page says of a filter it could not use, in the staff member's words (docs/dashboard.md, Read the audit log). */
function plainFilterError(e: FieldError, shown: Record<string, string>): FieldError {
  const typed = (shown[e.field] ?? '').slice(0, 40);
  switch (e.field) {
    case 'license_id':
      return { ...e, message: 'the licence must be an id or a key' };
    case 'from':
    case 'to':
      return {
        ...e,
        message: `the “${e.field === 'from' ? 'From' : 'To'}” day “${typed}” is not a date: pick a day from the calendar or type it as year-month-day, e.g. 2026-01-31`,
      };
    case 'product':
      return { ...e, message: 'the product must be a product code of at most 32 characters' };
    case 'actor':
      return { ...e, message: 'the actor must be at most 320 characters on one line' };
    default:
      return e;
  }
}

@DashboardController('audit')
export class AuditPageController {
  constructor(
    private readonly audit: AuditService,
    private readonly licenses: LicensesService,
    private readonly products: ProductsService,
    private readonly staff: StaffService,
  ) {}

  /**
   * The audit log with the admin API's filters, where the licence may be given by id or key (dashes
   * optional) and a customer by name or e-mail; dates are whole UTC days, `to` inclusive.
   */
  @Get()
  @Render('audit')
  async list(@Query() query: Record<string, unknown>, @CurrentProductScope() scope: ProductScope) {
    const { shown, filters, licenseIds, staffActor, errors } = await this.readFilters(query);
    const page = pageNumber(query.page);
    const checked = await validFilters(AuditQueryDto, filters, { limit: AUDIT_PAGE_SIZE, offset: (page - 1) * AUDIT_PAGE_SIZE });
    errors.push(...checked.errors.map((e) => plainFilterError(e, shown)));
    const value = { ...checked.value, license_ids: licenseIds, staff_actor: staffActor };
    const result = await this.audit.listEntries(value, scope).catch((err: unknown) => {
      // From after To: say so and show the whole range instead.
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      errors.push({ field: 'from', message: `the “From” day (${shown.from}) is after the “To” day (${shown.to}), so every date is shown` });
      delete filters.from;
      delete filters.to;
      return this.audit.listEntries({ ...value, from: undefined, to: undefined }, scope);
    });
    for (const name of Object.keys(shown)) if (name !== 'customer' && name !== 'staff' && !(name in filters)) delete shown[name];
    if (errors.some((e) => e.field === 'customer')) delete shown.customer;
    const products = await this.products.listProducts(scope);
    // An unknown product is not ignored (docs/dashboard.md, Read the audit log): it matches nothing, and the page says why.
    const unknownProduct = shown.product && !products.some((p) => p.code === shown.product) ? shown.product : null;
    return {
      title: 'Audit log',
      nav: 'audit',
      entries: await withLicenses(result.items, this.licenses),
      filters: shown,
      filterErrors: errors.length ? errors.map((e) => e.message).join('; ') : null,
      actions: AUDIT_ACTIONS,
      products,
      unknownProduct,
      actorTypes: ACTOR_TYPES,
      pagination: pagination('/audit', shown, page, AUDIT_PAGE_SIZE, result.total),
      ranges: quickRanges(shown),
      exportHref: `/audit/export.csv?${new URLSearchParams(shown).toString()}`,
      // Suggestions for the Staff member filter, which matches a username in any letter case.
      staffUsernames: await this.staff.usernames(),
    };
  }

  /** "Export CSV": every entry matching the filters shown (invalid ones dropped, as on the page), streamed. */
  @Get('export.csv')
  async exportCsv(
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<void> {
    const { filters, licenseIds, staffActor } = await this.readFilters(query);
    const { value } = await validFilters(ExportAuditQueryDto, filters, { format: 'csv' });
    sendExport(res, await this.audit.exportEntries({ ...value, license_ids: licenseIds, staff_actor: staffActor }, scope), 'csv', 'audit');
  }

  /**
   * The filters as typed (`shown`) and as the API takes them (`filters`: whole UTC days, `to` inclusive; a licence key
   * turned into its id; a customer into the ids of their licences), with what could not be used.
   */
  private async readFilters(query: Record<string, unknown>) {
    const text = (name: string) => (typeof query[name] === 'string' ? query[name].trim() : '');
    const shown: Record<string, string> = {};
    for (const name of ['action', 'actor_type', 'actor', 'product', 'license_id', 'customer', 'staff', 'from', 'to'])
      if (text(name)) shown[name] = text(name);
    const errors: FieldError[] = [];
    const filters: Record<string, string> = { ...shown };
    delete filters.customer;
    delete filters.staff;
    if (filters.license_id && !/^\d+$/.test(filters.license_id)) {
      const id = await this.licenses.findIdByKey(filters.license_id);
      if (id === undefined) errors.push({ field: 'license_id', message: `no licence has the id or key “${filters.license_id}”` });
      filters.license_id = id === undefined ? '' : String(id);
      if (id === undefined) delete filters.license_id;
    }
    let licenseIds: number[] | undefined;
    if (shown.customer) {
      if (shown.customer.length > 200) errors.push({ field: 'customer', message: 'the customer filter is longer than 200 characters' });
      else licenseIds = await this.licenses.idsOfCustomer(shown.customer, CUSTOMER_LICENCES);
    }
    if (filters.from) filters.from = DATE.test(filters.from) ? `${filters.from}T00:00:00Z` : filters.from;
    if (filters.to) filters.to = DATE.test(filters.to) ? `${filters.to}T23:59:59.999Z` : filters.to;
    // docs/dashboard.md, Read the audit log: a staff member's actions are the entries of actor staff:<username>.
    let staffActor: string | undefined;
    if (shown.staff) {
      if (usernameProblem(shown.staff)) errors.push({ field: 'staff', message: 'the staff member must be a username' });
      else staffActor = staffActorName(shown.staff);
      if (staffActor === undefined) delete shown.staff;
    }
    return { shown, filters, licenseIds, staffActor, errors };
  }
}
