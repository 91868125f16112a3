import { Get, Param, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditService, type RecentRefusal } from '../../audit/audit.service';
import { CHART_DAYS, CHART_SERIES, dailyChart } from '../views/daily-chart';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { CreateLicenseDto, UpdateLicenseDto } from '../../licenses/dto/create-license.dto';
import { ReleaseSeatsDto, RevokeLicenseDto } from '../../licenses/dto/license-actions.dto';
import type { LicenseDetailsDto } from '../../licenses/dto/license.dto';
import { ExportLicensesQueryDto, ListLicensesQueryDto } from '../../licenses/dto/list-licenses.query';
import {
  CUSTOMER_EMAIL_MAX_LENGTH,
  CUSTOMER_NOTE_MAX_LENGTH,
  CustomerRef,
  customerRef,
  CustomersService,
} from '../../licenses/customers/customers.service';
import { sendExport } from '../../common/http/export';
import { LICENSE_STATUSES } from '../../licenses/license-status';
import { LICENSE_TYPES } from '../../licenses/license-type';
import { LICENSE_SORTS, LicenseSort } from '../../licenses/licenses.service';
import { MailService } from '../../mail/mail.service';
import { LicensesService } from '../../licenses/licenses.service';
import { ChangeLicense } from '../../licenses/use-cases/change-license';
import { CreateLicense } from '../../licenses/use-cases/create-license';
import { ExtendLicense } from '../../licenses/use-cases/extend-license';
import { initialExpiryMessage, unofferedFeaturesMessage } from '../../licenses/use-cases/license-rules';
import { ReleaseSeats } from '../../licenses/use-cases/release-seats';
import { RevokeLicense } from '../../licenses/use-cases/revoke-license';
import { SuspendLicense } from '../../licenses/use-cases/suspend-license';
import { UsageService } from '../../licenses/usage/usage.service';
import type { Product } from '../../products/product.entity';
import { ProductsService } from '../../products/products.service';
import { ActivationService } from '../../activation/activation.service';
import { RelayPoolIssuer } from '../../activation/relay-pools';
import { checkDto, validFilters } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { refuseUnlessRouteAllowed } from '../http/role.guard';
import { setFlash } from '../http/view-locals';
import { summariseErrors } from '../http/form-errors';
import { CONFIRMATIONS, ConfirmAction } from './confirmations';
import {
  editLicenseForm,
  emptyLicenseForm,
  formErrors,
  LicenseFormValues,
  licenseFormView,
  mergeErrors,
  readLicenseForm,
  toCreateLicenseInput,
  toUpdateLicenseInput,
  withoutFields,
} from './license-form';
import { pageNumber, pagination } from './pagination';
import { seatLimit } from '../../licenses/license-limits';
import { SavedViewsService } from '../saved-views.service';

export const LICENSES_PAGE_SIZE = 25;
/** The page sizes the licence list offers (docs/dashboard.md, Pages). */
const LICENSE_PAGE_SIZES = [25, 50, 100, 200] as const;
export const EXPIRING_SOON_DAYS = 30;
/** Audit entries per page of a customer's activity timeline. */
const CUSTOMER_TIMELINE_PAGE_SIZE = 20;
const NOTE_LABELS = { note: 'Note' };
const FILTERS = ['product', 'status', 'license_type', 'q', 'trial_ip'] as const;
/** What makes a view of the list (docs/dashboard.md, Saved views): its filters, page size and sort, not its page. */
/** A view's query string as saved (docs/dashboard.md, Saved views): its fields in name order, so one view has one text. */
export function viewQuery(fields: Record<string, string> | URLSearchParams): string {
  const params = new URLSearchParams(fields);
  params.sort();
  return params.toString();
}

/** Saved views listed above the list (as many as may be saved). */
const SAVED_VIEWS_SHOWN = 50;
export const LIST_VIEW_FIELDS = ['q', 'product', 'status', 'license_type', 'trial_ip', 'expiring', 'size', 'sort', 'dir'] as const;

/** The list's bulk actions (docs/dashboard.md, Bulk actions); export needs no confirmation. */
export const BULK_CHOICES = [
  { value: 'renew', label: 'Renew for one term' },
  { value: 'extend', label: 'Extend by days' },
  { value: 'suspend', label: 'Suspend' },
  { value: 'export', label: 'Export CSV' },
] as const;

const COLUMNS: { label: string; sort?: LicenseSort }[] = [
  { label: 'Licence key', sort: 'license_key' },
  { label: 'Customer', sort: 'customer_name' },
  { label: 'Product', sort: 'product' },
  { label: 'Type', sort: 'license_type' },
  { label: 'Status', sort: 'status' },
  { label: 'Seats' },
  { label: 'Expires', sort: 'expires_at' },
  { label: 'Created', sort: 'created_at' },
];

/** The list filters given in the query string (non-empty text only). */
function readFilters(query: Record<string, unknown>): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const name of FILTERS) if (typeof query[name] === 'string' && query[name]) filters[name] = query[name];
  return filters;
}

/** The licence page's recent client and customer events (docs/dashboard.md, Pages). */
const CLIENT_EVENTS = 10;
/** Who acts on a licence from outside: its client's machines and the customer in the portal. */
const TOP_EVENT_ACTORS = new Set(['client', 'customer']);

/** Why the client refused, in plain words, by its error code (docs/errors.md, Client codes). */
const REFUSAL_REASONS: Record<string, string> = {
  ALREADY_ACTIVATED: 'every seat was taken',
  KEY_EXPIRED: 'the licence had expired',
  KEY_REVOKED: 'the licence is revoked',
  KEY_SUSPENDED: 'the licence was suspended',
  PRODUCT_MISMATCH: 'the key is for another product',
  INVALID_KEY: 'the key was not recognised',
};

/**
 * The licence's newest refusal of the last 7 days (docs/dashboard.md, Refused recently): its code, time and machine,
 * and, when the machine was turned away for want of a seat and is still not bound, a release confirmation prefilled
 * for the seat silent the longest (the likely old laptop); null when there was no refusal.
 */
function refusedMachine(
  license: {
    id: number;
    limits: Record<string, unknown>;
    activations: { machine_fingerprint: string; hostname: string | null; last_seen_at: string }[];
  },
  refusal: RecentRefusal | undefined,
) {
  if (!refusal) return null;
  const boundNow = license.activations.some((s) => s.machine_fingerprint === refusal.machine_fingerprint);
  const seatTaken = refusal.code === 'ALREADY_ACTIVATED' && !boundNow && license.activations.length >= seatLimit(license.limits);
  const quietest = [...license.activations].sort((a, b) => Date.parse(a.last_seen_at) - Date.parse(b.last_seen_at))[0];
  return {
    ...refusal,
    reason: REFUSAL_REASONS[refusal.code] ?? 'see the audit log',
    boundNow,
    auditHref: `/audit?${new URLSearchParams({ license_id: String(license.id), action: 'license.activation_denied' }).toString()}`,
    release:
      seatTaken && quietest
        ? {
            hostname: quietest.hostname,
            href: `/licenses/${license.id}/confirm/release?${new URLSearchParams({ machine_fingerprint: quietest.machine_fingerprint }).toString()}`,
          }
        : null,
  };
}

/** Licences with their newest refusal of the last 7 days (`refusal`), read in one query for the whole page. */
async function withRefusals<L extends { id: number }>(audit: AuditService, licenses: L[]): Promise<(L & { refusal?: RecentRefusal })[]> {
  const refusals = await audit.recentRefusals(licenses.map((l) => l.id));
  return licenses.map((l) => ({ ...l, refusal: refusals.get(l.id) }));
}

/** The top bar's results as you type: how many, and from how many characters on. */
const SUGGESTIONS = 8;
const SUGGEST_MIN_CHARS = 2;
/** A search that is a whole e-mail address (docs/dashboard.md, Find a licence or a customer). */
const FULL_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const describeErrors = (errors: FieldError[]) => errors.map((e) => e.message).join('; ');
const text = (query: Record<string, unknown>, name: string) => (typeof query[name] === 'string' ? query[name].trim() : '');

/** The licence page's chart: the client's activations and refusals (docs/dashboard.md, Charts). */
const LICENSE_CHART_SERIES = CHART_SERIES.slice(0, 2);

@DashboardController('licenses')
export class LicensesPagesController {
  constructor(
    private readonly licenses: LicensesService,
    private readonly products: ProductsService,
    private readonly audit: AuditService,
    private readonly activation: ActivationService,
    private readonly mail: MailService,
    private readonly usage: UsageService,
    private readonly customers: CustomersService,
    private readonly savedViews: SavedViewsService,
    private readonly relayPools: RelayPoolIssuer,
    private readonly creating: CreateLicense,
    private readonly changing: ChangeLicense,
    private readonly extending: ExtendLicense,
    private readonly suspending: SuspendLicense,
    private readonly revoking: RevokeLicense,
    private readonly releasing: ReleaseSeats,
  ) {}

  /**
   * The list with the admin API's filters (invalid ones dropped and named), the staff search (`q` also
   * finds machines), "expiring in 30 days", and any column's sort order.
   */
  @Get()
  @Render('licenses/list')
  async list(@Query() query: Record<string, unknown>, @CurrentProductScope() scope: ProductScope) {
    const sort = LICENSE_SORTS.find((s) => s === text(query, 'sort'));
    const direction = text(query, 'dir') === 'asc' ? 'asc' : text(query, 'dir') === 'desc' ? 'desc' : undefined;
    const page = pageNumber(query.page);
    // The page size is part of the view (a bookmark keeps it); anything but the offered sizes is the default.
    const size = LICENSE_PAGE_SIZES.find((n) => String(n) === text(query, 'size')) ?? LICENSES_PAGE_SIZE;
    const sizeParam: Record<string, string> = size === LICENSES_PAGE_SIZE ? {} : { size: String(size) };
    const { filters, value, errors } = await listSelection(query, { limit: size, offset: (page - 1) * size });
    const result = await this.licenses.listLicensesForStaff(value, { sort, direction }, scope);
    const kept = { ...filters, ...sizeParam, ...(sort ? { sort } : {}), ...(direction ? { dir: direction } : {}) };
    return {
      title: filters.q ? `Search: ${filters.q}` : 'Licences',
      nav: 'licenses',
      searchTerm: filters.q,
      licenses: await withRefusals(this.audit, result.items),
      columns: sortableColumns(
        '/licenses',
        { ...filters, ...sizeParam },
        sort ?? 'created_at',
        direction ?? (sort && sort !== 'created_at' ? 'asc' : 'desc'),
      ),
      filters,
      // On a phone the filters fold behind a button that counts them (docs/dashboard.md, Pages).
      activeFilters: Object.keys(filters).length,
      expiringDays: EXPIRING_SOON_DAYS,
      filterErrors: errors.length ? describeErrors(errors) : null,
      products: await this.products.listProducts(scope),
      statuses: LICENSE_STATUSES,
      types: LICENSE_TYPES,
      pagination: pagination('/licenses', kept, page, size, result.total),
      pageSizes: LICENSE_PAGE_SIZES.map((n) => ({ value: n, selected: n === size })),
      // The export takes the filters the admin API knows (product, status, type, q), as shown.
      exportHref: `/licenses/export.csv?${new URLSearchParams(readFilters(query)).toString()}`,
      // docs/dashboard.md, Bulk actions: the rows carry checkboxes; the bar sends the view with the selection.
      bulkSelect: true,
      view: Object.entries(kept).map(([name, v]) => ({ name, value: v })),
      // docs/dashboard.md, Saved views: the shared views, the one shown marked.
      savedViews: (await this.savedViews.list(SAVED_VIEWS_SHOWN)).map((v) => ({
        ...v,
        href: `/licenses?${v.query}`,
        current: v.query === viewQuery(kept),
      })),
      canSaveView: Object.keys(kept).length > 0,
      total: result.total,
      bulkActions: BULK_CHOICES,
    };
  }

  /**
   * The top bar's search (docs/dashboard.md, Find a licence or a customer): one matching licence opens it, anything
   * else shows the list for the same `q` (which also explains a search that is not valid).
   */
  @Get('search')
  async search(@Query() query: Record<string, unknown>, @Res() res: Response, @CurrentProductScope() scope: ProductScope): Promise<void> {
    const q = text(query, 'q');
    const list = `/licenses${q ? `?${new URLSearchParams({ q }).toString()}` : ''}`;
    if (!q) return res.redirect(303, list);
    const { value, errors } = await validFilters(ListLicensesQueryDto, { q }, { limit: 2, offset: 0 });
    if (errors.length || !value.q) return res.redirect(303, list);
    const found = await this.licenses.listLicensesForStaff({ ...value, search_machines: true }, {}, scope);
    if (found.items.length === 1) return res.redirect(303, `/licenses/${found.items[0].id}`);
    // A whole address that several licences carry is a customer: their page answers better than a list.
    if (found.items.length > 1 && FULL_EMAIL.test(q) && q.length <= CUSTOMER_EMAIL_MAX_LENGTH) {
      const customer = await this.licenses.listLicensesForStaff({ customer_email: q, limit: 1, offset: 0 }, {}, scope);
      if (customer.items.length) return res.redirect(303, `/licenses/customer?${new URLSearchParams({ email: q }).toString()}`);
    }
    res.redirect(303, list);
  }

  /**
   * Results as the staff member types (docs/dashboard.md, Find a licence or a customer): an HTML fragment, no layout,
   * of the first matches, for the top bar's script to show under the box; empty for a search too short or not valid.
   */
  @Get('search/suggest')
  async suggest(@Query() query: Record<string, unknown>, @Res() res: Response, @CurrentProductScope() scope: ProductScope): Promise<void> {
    const q = text(query, 'q');
    const { value, errors } =
      q.length >= SUGGEST_MIN_CHARS ? await validFilters(ListLicensesQueryDto, { q }, { limit: SUGGESTIONS, offset: 0 }) : {};
    const found =
      value?.q && !errors?.length ? await this.licenses.listLicensesForStaff({ ...value, search_machines: true }, {}, scope) : null;
    res.setHeader('Cache-Control', 'no-store');
    res.render('licenses/suggestions', {
      layout: false,
      q,
      searched: found !== null,
      licenses: await withRefusals(this.audit, found?.items ?? []),
      more: found ? found.total > found.items.length : false,
      total: found?.total ?? 0,
      listHref: `/licenses?${new URLSearchParams({ q }).toString()}`,
    });
  }

  /**
   * A customer's page (docs/dashboard.md, A customer's page): licences, machines bound now, the activity of those
   * licences (newest first, `tpage` pages it) and the staff's notes. By e-mail (any case) or PIB; a name alone is a search.
   */
  @Get('customer')
  async customer(@Query() query: Record<string, unknown>, @Res() res: Response, @CurrentProductScope() scope: ProductScope): Promise<void> {
    const ref = customerRef(text(query, 'email'), text(query, 'pib'));
    if (!ref) return res.redirect(303, `/licenses?${new URLSearchParams({ q: text(query, 'name') }).toString()}`);
    await this.renderCustomer(res, 200, ref, query, {}, scope);
  }

  /** A staff note about the customer (CSRF-checked, 1-2000 characters, audited as `customer.note_added`). */
  @Post('customer/notes')
  async addCustomerNote(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<void> {
    const body = asFormBody(req.body);
    const ref = customerRef(formText(body, 'email'), formText(body, 'pib'));
    if (!ref) throw AppError.notFound('Customer');
    const note = typeof body.note === 'string' ? body.note : '';
    try {
      await this.customers.addNote(ref, note, actor, scope);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      return this.renderCustomer(res, 400, ref, {}, { note, errors: err.details?.fields as FieldError[] | undefined }, scope);
    }
    setFlash(req, 'success', 'Note added.');
    res.redirect(303, `/licenses/customer?${customerParams(ref).toString()}#notes`);
  }

  private async renderCustomer(
    res: Response,
    status: number,
    ref: CustomerRef,
    query: Record<string, unknown>,
    form: { note?: string; errors?: FieldError[] },
    scope: ProductScope,
  ): Promise<void> {
    const page = pageNumber(query.page);
    const timelinePage = pageNumber(query.tpage);
    const found = await this.customers.customerPage(
      ref,
      {
        licenses: { limit: LICENSES_PAGE_SIZE, offset: (page - 1) * LICENSES_PAGE_SIZE },
        timeline: { limit: CUSTOMER_TIMELINE_PAGE_SIZE, offset: (timelinePage - 1) * CUSTOMER_TIMELINE_PAGE_SIZE },
      },
      scope,
    );
    // An account limited to products meets only customers with a licence of theirs (docs/dashboard.md, Limited accounts).
    if (scope !== null && found.licenses.total === 0) throw AppError.notFound('Customer');
    const params = Object.fromEntries(customerParams(ref));
    const names = [...new Set(found.licenses.items.map((l) => l.customer_name))];
    const timelinePaging = pagination(
      '/licenses/customer',
      { ...params, page: page > 1 ? page : undefined },
      timelinePage,
      CUSTOMER_TIMELINE_PAGE_SIZE,
      found.timeline.total,
    );
    const tpage = (href: string | null) => href && href.replace(/([?&])page=(\d+)$/, '$1tpage=$2');
    res.status(status).render('licenses/customer', {
      title: `Customer ${names[0] ?? ref.email ?? ref.pib}`,
      nav: 'licenses',
      email: ref.email,
      pib: ref.pib,
      names,
      licenses: await withRefusals(this.audit, found.licenses.items),
      columns: COLUMNS.map((c) => ({ label: c.label })),
      machines: found.machines,
      // Each entry's licence names this customer the way it is reached here (e-mail or PIB), with that licence's own name.
      timeline: found.timeline.items.map((e) => ({
        ...e,
        license: e.license ? { ...e.license, customer_email: ref.email, customer_pib: ref.pib } : undefined,
      })),
      timelinePagination: { ...timelinePaging, prev: tpage(timelinePaging.prev), next: tpage(timelinePaging.next) },
      notes: found.notes,
      noteMax: CUSTOMER_NOTE_MAX_LENGTH,
      note: form.note ?? '',
      ...summariseErrors(form.errors ?? [], NOTE_LABELS),
      auditLink: `/audit?${new URLSearchParams({ customer: ref.email ?? ref.pib }).toString()}`,
      newLink: '/licenses/new',
      pagination: pagination('/licenses/customer', params, page, LICENSES_PAGE_SIZE, found.licenses.total),
    });
  }

  /** "Export CSV": every licence matching the filters shown (invalid ones dropped, as on the list), streamed. */
  @Get('export.csv')
  async exportCsv(@Query() query: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const { value } = await validFilters(ExportLicensesQueryDto, readFilters(query), { format: 'csv' });
    sendExport(res, await this.licenses.exportLicenses(value), 'csv', 'licenses');
  }

  @Get('new')
  async newForm(@Query('product') product: unknown, @Res() res: Response, @CurrentProductScope() scope: ProductScope): Promise<void> {
    const products = await this.activeProducts(scope);
    const chosen = products.find((p) => p.code === product) ?? products[0];
    this.renderForm(res, 200, products, emptyLicenseForm(chosen), []);
  }

  /**
   * The admin API's validation and service; a rejected form comes back with every message at once
   * (conversion, the DTO's rules and the product's rules) and the typed values.
   */
  @Post()
  async create(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<void> {
    const products = await this.activeProducts(scope);
    const form = readLicenseForm(asFormBody(req.body), products);
    const { input, errors } = toCreateLicenseInput(form);
    const checked = await checkDto(CreateLicenseDto, withoutFields(input, errors));
    const product = products.find((p) => p.code === form.product_code);
    const rules: FieldError[] = [];
    const features = product && unofferedFeaturesMessage(form.features, product);
    if (features) rules.push({ field: 'features', message: features });
    const expiry = initialExpiryMessage(form.license_type, input.expires_at as string | undefined, new Date());
    if (expiry) rules.push({ field: 'expires_at', message: expiry });
    const all = mergeErrors(mergeErrors(errors, checked.errors), rules);
    if (all.length || !checked.value) return this.renderForm(res, 400, products, form, all);
    try {
      const license = await this.creating.create(checked.value, actor, scope);
      setFlash(req, 'success', `Licence ${license.licenseKey} created.`);
      res.redirect(303, `/licenses/${license.id}`);
    } catch (err) {
      this.renderForm(res, 400, products, form, badRequestFields(err));
    }
  }

  @Get(':id')
  @Render('licenses/show')
  async show(@Param('id', DashboardIdPipe) id: number, @CurrentProductScope() scope: ProductScope) {
    const license = await this.licenses.getLicense(id, scope);
    const [history, audit, preview, usage, activity, refusals, relayPools] = await Promise.all([
      this.licenses.listActivations(id),
      this.audit.listEntries({ license_id: id, limit: 100, offset: 0 }),
      this.activation.previewLicense(license),
      this.usage.usageReport(id),
      this.audit.dailyCounts(
        LICENSE_CHART_SERIES.map((s) => s.key),
        CHART_DAYS,
        { licenseId: id },
      ),
      this.audit.recentRefusals([id]),
      this.relayPools.list(id, scope),
    ]);
    const summaries = new Map([[id, { license_key: license.license_key, customer_name: license.customer_name }]]);
    const entries = audit.items.map((e) => ({ ...e, license: e.license_id ? summaries.get(e.license_id) : undefined }));
    return {
      title: license.license_key,
      nav: 'licenses',
      license,
      renewable: license.license_type !== 'PERPETUAL' && !license.revoked,
      seatLimit: seatLimit(license.limits),
      customerLink: license.customer_email
        ? `/licenses/customer?${new URLSearchParams({ email: license.customer_email }).toString()}`
        : license.customer_pib
          ? `/licenses/customer?${new URLSearchParams({ pib: license.customer_pib }).toString()}`
          : null,
      history,
      audit: entries,
      // The support view (docs/dashboard.md, Tasks): what the customer and their machines did lately, and the last refusal.
      clientEvents: entries.filter((e) => TOP_EVENT_ACTORS.has(e.actor_type)).slice(0, CLIENT_EVENTS),
      refusedMachine: refusedMachine(license, refusals.get(id)),
      auditTotal: audit.total,
      preview: { signed: preview.signed, seat: preview.seat, json: JSON.stringify(preview.document, null, 2) },
      // docs/licences.md, Usage metering: this period's count and the past periods, newest first (12 at most).
      usage: usage.max_uses === null ? null : { ...usage, history: usage.history.slice(0, 12) },
      // docs/dashboard.md, Charts: this licence's activations and refusals per day, and its seats in use vs allowed.
      chartDays: CHART_DAYS,
      activity: dailyChart(
        `Activations and refusals of this licence per UTC day, last ${CHART_DAYS} days, oldest first`,
        LICENSE_CHART_SERIES,
        activity,
      ),
      seatsInUse: license.activations.length,
      // docs/dashboard.md, Relay pools: seats lent to relays, and the form that issues a pool.
      relayPools,
      relayPoolSeats: relayPools.filter((p) => p.status === 'active').reduce((sum, p) => sum + p.seats, 0),
    };
  }

  @Get(':id/edit')
  async editForm(
    @Param('id', DashboardIdPipe) id: number,
    @Res() res: Response,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<void> {
    const license = await this.licenses.getLicense(id, scope);
    const product = await this.productOf(license);
    this.renderEdit(res, 200, license, product, editLicenseForm(license, product), []);
  }

  /** PUT through the dashboard: the admin API's DTO and service, every error in one pass. */
  @Post(':id/edit')
  async edit(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ) {
    const license = await this.licenses.getLicense(id, scope);
    const product = await this.productOf(license);
    const body = asFormBody(req.body);
    const form = { ...readLicenseForm({ ...body, product_code: product.code }, [product]), active: formText(body, 'active') === 'on' };
    const { input, errors } = toUpdateLicenseInput(form, license);
    const checked = await checkDto(UpdateLicenseDto, withoutFields(input, errors));
    const rules: FieldError[] = [];
    const features = unofferedFeaturesMessage(form.features, product);
    if (features) rules.push({ field: 'features', message: features });
    const expiresAt = 'expires_at' in input ? input.expires_at : license.expires_at;
    if (form.license_type === 'PERPETUAL' && expiresAt) {
      rules.push({ field: 'expires_at', message: 'A PERPETUAL licence never expires: expires_at must be null' });
    }
    if (form.license_type !== 'PERPETUAL' && (LICENSE_TYPES as readonly string[]).includes(form.license_type) && expiresAt === null) {
      rules.push({ field: 'expires_at', message: `A ${form.license_type} licence needs an expires_at` });
    }
    if (form.active && license.revoked) rules.push({ field: 'active', message: 'A revoked licence cannot be made active again' });
    const all = mergeErrors(mergeErrors(errors, checked.errors), rules);
    if (all.length || !checked.value) return this.renderEdit(res, 400, license, product, form, all);
    try {
      await this.changing.change(id, checked.value, actor, scope);
      setFlash(req, 'success', 'Licence saved.');
      res.redirect(303, `/licenses/${id}`);
    } catch (err) {
      this.renderEdit(res, 400, license, product, form, badRequestFields(err));
    }
  }

  /** One more term of the licence's type from the later of now and its expiry. */
  @Post(':id/renew')
  async renew(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ) {
    await this.act(req, res, id, async () => {
      const renewed = await this.extending.renew(id, actor, scope);
      return `Licence renewed until ${(renewed.expires_at as string).slice(0, 10)}.`;
    });
  }

  /** "Send the key again": a new license_issued message to the customer e-mail (docs/mail.md, When mail is sent). */
  @Post(':id/send-key')
  async sendKey(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    await this.act(req, res, id, async () => {
      const license = await this.licenses.getLicense(id);
      const product = await this.productOf(license);
      const address = await this.mail.resendKey(license, product.id, actor);
      return `The key is on its way to ${address}.`;
    });
  }

  /** The confirmation step of a destructive action: what it does, an optional reason (required to revoke). */
  @Get(':id/confirm/:action')
  async confirm(
    @Param('id', DashboardIdPipe) id: number,
    @Param('action') action: string,
    @Query('machine_fingerprint') machine: unknown,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentProductScope() scope: ProductScope,
  ): Promise<void> {
    const confirmation = CONFIRMATIONS[action as ConfirmAction];
    if (!Object.prototype.hasOwnProperty.call(CONFIRMATIONS, action)) throw AppError.notFound('Page');
    // The page answers as its action does: support may not revoke, so it may not open the revoke page either.
    refuseUnlessRouteAllowed(req.user, `POST /licenses/:id/${confirmation.post}`);
    const license = await this.licenses.getLicense(id, scope);
    const seat = typeof machine === 'string' ? license.activations.find((s) => s.machine_fingerprint === machine) : undefined;
    if (action === 'release' && !seat) throw AppError.notFound('Seat');
    res.render('licenses/confirm', {
      ...confirmation,
      title: `${confirmation.title}: ${license.license_key}`,
      heading: confirmation.title,
      nav: 'licenses',
      license,
      seat,
      action,
    });
  }

  @Post(':id/revoke')
  async revoke(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ) {
    await this.act(req, res, id, async () => {
      const { value, errors } = await checkDto(RevokeLicenseDto, { reason: formText(asFormBody(req.body), 'reason') });
      if (!value) throw AppError.validation(errors.length ? errors : [{ field: 'reason', message: 'give a reason' }]);
      await this.revoking.revoke(id, value.reason, actor, scope);
      return 'Licence revoked.';
    });
  }

  /** One machine's seat (machine_fingerprint given) or every seat, with an optional reason for the audit entry. */
  @Post(':id/release')
  async release(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ) {
    await this.act(req, res, id, async () => {
      const body = asFormBody(req.body);
      const plain: Record<string, unknown> = {};
      if (formText(body, 'machine_fingerprint')) plain.machine_fingerprint = formText(body, 'machine_fingerprint');
      if (formText(body, 'reason')) plain.reason = formText(body, 'reason');
      const { value, errors } = await checkDto(ReleaseSeatsDto, plain);
      if (!value) throw AppError.validation(errors);
      const result = await this.releasing.release(id, value, actor, scope);
      return `${result.message}.`;
    });
  }

  @Post(':id/suspend')
  async suspend(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ) {
    await this.act(req, res, id, async () => {
      await this.suspending.suspend(id, await optionalReason(req), actor, scope);
      return 'Licence suspended: it no longer activates or validates until reinstated.';
    });
  }

  @Post(':id/reinstate')
  async reinstate(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() scope: ProductScope,
  ) {
    await this.act(req, res, id, async () => {
      await this.suspending.reinstate(id, actor, scope);
      return 'Licence reinstated.';
    });
  }

  /** Post/redirect/get: the outcome (or why the service refused) is shown on the licence page. Unknown ids: 404 page. */
  private async act(req: Request, res: Response, id: number, work: () => Promise<string>): Promise<void> {
    try {
      setFlash(req, 'success', await work());
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404 || err.status >= 500) throw err;
      const fields = err.details?.fields as FieldError[] | undefined;
      setFlash(req, 'error', fields?.length ? describeErrors(fields) : err.message);
    }
    res.redirect(303, `/licenses/${id}`);
  }

  private async activeProducts(scope: ProductScope): Promise<Product[]> {
    return (await this.products.listProducts(scope)).filter((p) => p.active);
  }

  private async productOf(license: LicenseDetailsDto): Promise<Product> {
    const product = (await this.products.listProducts()).find((p) => p.code === license.product_code);
    if (!product) throw AppError.notFound('Product');
    return product;
  }

  private renderForm(res: Response, status: number, products: Product[], form: LicenseFormValues, errors: FieldError[]): void {
    res.status(status).render('licenses/new', {
      title: 'New licence',
      nav: 'new',
      mailWritesFiles: this.mail.writesFiles,
      ...licenseFormView(products, form),
      ...formErrors(errors),
    });
  }

  private renderEdit(
    res: Response,
    status: number,
    license: LicenseDetailsDto,
    product: Product,
    form: LicenseFormValues & { active: boolean },
    errors: FieldError[],
  ): void {
    const view = licenseFormView([product], form);
    res.status(status).render('licenses/edit', {
      title: `Edit ${license.license_key}`,
      nav: 'licenses',
      license,
      ...view,
      product: view.products[0],
      ...formErrors(errors),
    });
  }
}

/** A 400 from the service as field errors for the form; anything else is not the form's business. */
function badRequestFields(err: unknown): FieldError[] {
  if (!(err instanceof AppError) || err.status !== 400) throw err;
  return (err.details?.fields as FieldError[] | undefined) ?? [{ field: 'form', message: err.message }];
}

/** The reason typed on a confirmation page, checked like the API's release reason (up to 500 characters). */
async function optionalReason(req: Request): Promise<string | null> {
  const reason = formText(asFormBody(req.body), 'reason');
  if (!reason) return null;
  const { value, errors } = await checkDto(ReleaseSeatsDto, { reason });
  if (!value) throw AppError.validation(errors);
  return value.reason ?? null;
}

/**
 * The list's filters from a query string or a form (docs/dashboard.md, Bulk actions: "all matching" means this), checked
 * like the list checks them: those the admin API's DTO refuses are dropped and reported.
 */
export async function listSelection(query: Record<string, unknown>, paging: { limit: number; offset: number }) {
  const filters: Record<string, string> = {};
  for (const name of FILTERS) if (text(query, name)) filters[name] = text(query, name);
  if (text(query, 'expiring') === String(EXPIRING_SOON_DAYS)) filters.expiring = String(EXPIRING_SOON_DAYS);
  const { expiring, ...apiFilters } = filters;
  const { value, errors } = await validFilters(ListLicensesQueryDto, apiFilters, paging);
  for (const name of FILTERS) if (!(name in apiFilters)) delete filters[name];
  return {
    filters,
    value: { ...value, search_machines: true, expiring_within_days: expiring ? EXPIRING_SOON_DAYS : undefined },
    errors,
  };
}

/** The query string that names a customer on the customer page. */
const customerParams = (ref: CustomerRef) => new URLSearchParams(ref.email !== undefined ? { email: ref.email } : { pib: ref.pib });

/** Column headers whose links sort by that column (a second click reverses), keeping the filters. */
export function sortableColumns(path: string, filters: Record<string, string>, sort: LicenseSort, direction: 'asc' | 'desc') {
  return COLUMNS.map((c) => {
    if (!c.sort) return { label: c.label };
    const current = c.sort === sort;
    const next = current ? (direction === 'asc' ? 'desc' : 'asc') : c.sort === 'created_at' ? 'desc' : 'asc';
    const href = `${path}?${new URLSearchParams({ ...filters, sort: c.sort, dir: next }).toString()}`;
    return {
      label: c.label,
      href,
      ariaSort: current ? (direction === 'asc' ? 'ascending' : 'descending') : undefined,
      mark: current ? (direction === 'asc' ? ' ▲' : ' ▼') : '',
    };
  });
}
