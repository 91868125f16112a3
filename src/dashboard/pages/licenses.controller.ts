import { Get, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditService } from '../../audit/audit.service';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { FieldError } from '../../common/errors/app-error';
import { sendExport } from '../../common/http/export';
import { asFormBody } from '../../html/forms';
import { CUSTOMER_EMAIL_MAX_LENGTH } from '../../licenses/customers/customers.service';
import { CreateLicenseDto } from '../../licenses/dto/create-license.dto';
import { ExportLicensesQueryDto, ListLicensesQueryDto } from '../../licenses/dto/list-licenses.query';
import { LICENSE_STATUSES } from '../../licenses/license-status';
import { LICENSE_TYPES } from '../../licenses/license-type';
import { LICENSE_SORTS, LicensesService } from '../../licenses/licenses.service';
import { CreateLicense } from '../../licenses/use-cases/create-license';
import { initialExpiryMessage, unofferedFeaturesMessage } from '../../licenses/use-cases/license-rules';
import { MailService } from '../../mail/mail.service';
import type { Product } from '../../products/product.entity';
import { ProductsService } from '../../products/products.service';
import { checkDto, validFilters } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { describeErrors } from '../http/form-action';
import { setFlash } from '../http/view-locals';
import { SavedViewsService } from '../saved-views.service';
import {
  badRequestFields,
  emptyLicenseForm,
  formErrors,
  LicenseFormValues,
  licenseFormView,
  mergeErrors,
  readLicenseForm,
  toCreateLicenseInput,
  withoutFields,
} from './license-form';
import { REFUSAL_REASONS } from './license.controller';
import {
  BULK_CHOICES,
  byNewestRefusal,
  EXPIRING_SOON_DAYS,
  LICENSES_PAGE_SIZE,
  listSelection,
  readFilters,
  REFUSED_FILTER,
  REFUSED_MAX,
  sortableColumns,
  text,
  viewQuery,
  withRefusals,
} from './license-list';
import { pageNumber, pagination } from './pagination';

export { EXPIRING_SOON_DAYS, LICENSES_PAGE_SIZE } from './license-list';

/** The page sizes the licence list offers (docs/dashboard.md, Pages). */
const LICENSE_PAGE_SIZES = [25, 50, 100, 200] as const;
/** Saved views listed above the list (as many as may be saved). */
const SAVED_VIEWS_SHOWN = 50;
/** The top bar's results as you type: how many, and from how many characters on. */
const SUGGESTIONS = 8;
const SUGGEST_MIN_CHARS = 2;
/** A search that is a whole e-mail address (docs/dashboard.md, Find a licence or a customer). */
const FULL_EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The licence list, the search, the refusals to work through and the new-licence form (docs/dashboard.md, Pages). */
@DashboardController('licenses')
export class LicensesPagesController {
  constructor(
    private readonly licenses: LicensesService,
    private readonly products: ProductsService,
    private readonly audit: AuditService,
    private readonly mail: MailService,
    private readonly savedViews: SavedViewsService,
    private readonly creating: CreateLicense,
  ) {}

  /**
   * The list with the admin API's filters (invalid ones dropped and named), the staff search (`q` also finds machines),
   * "expiring in 30 days", "refused recently" (newest refusal first unless another sort is asked), and any column's sort.
   */
  @Get()
  @Render('licenses/list')
  async list(@Query() query: Record<string, unknown>, @CurrentProductScope() scope: ProductScope) {
    const asked = LICENSE_SORTS.find((s) => s === text(query, 'sort'));
    const direction = text(query, 'dir') === 'asc' ? 'asc' : text(query, 'dir') === 'desc' ? 'desc' : undefined;
    const page = pageNumber(query.page);
    // The page size is part of the view (a bookmark keeps it); anything but the offered sizes is the default.
    const size = LICENSE_PAGE_SIZES.find((n) => String(n) === text(query, 'size')) ?? LICENSES_PAGE_SIZE;
    const sizeParam: Record<string, string> = size === LICENSES_PAGE_SIZE ? {} : { size: String(size) };
    const paging = { limit: size, offset: (page - 1) * size };
    const { filters, value, errors, refusedAt } = await listSelection(query, paging, { audit: this.audit, scope });
    const byRefusal = refusedAt && !asked;
    // By refusal: the few refused licences (at most REFUSED_MAX) read whole, ordered by their refusal, then paged.
    const result = await this.licenses.listLicensesForStaff(
      byRefusal ? { ...value, limit: REFUSED_MAX, offset: 0 } : value,
      { sort: asked, direction },
      scope,
    );
    const items = byRefusal ? byNewestRefusal(result.items, refusedAt).slice(paging.offset, paging.offset + size) : result.items;
    const sort: Record<string, string> = asked ? { sort: asked } : byRefusal ? { sort: 'refused' } : {};
    const kept = { ...filters, ...sizeParam, ...sort, ...(direction && asked ? { dir: direction } : {}) };
    return {
      title: filters.q ? `Search: ${filters.q}` : 'Licences',
      nav: 'licenses',
      searchTerm: filters.q,
      licenses: await withRefusals(this.audit, items),
      columns: sortableColumns(
        '/licenses',
        { ...filters, ...sizeParam },
        asked ?? (byRefusal ? 'refused' : 'created_at'),
        direction ?? (asked && asked !== 'created_at' ? 'asc' : 'desc'),
      ),
      byRefusal,
      refusedSortHref: `/licenses?${new URLSearchParams({ ...filters, ...sizeParam, refused: REFUSED_FILTER }).toString()}`,
      filters,
      // On a phone the filters fold behind a button that counts them (docs/dashboard.md, Pages).
      activeFilters: Object.keys(filters).length,
      expiringDays: EXPIRING_SOON_DAYS,
      refusedFilter: REFUSED_FILTER,
      filterErrors: errors.length ? describeErrors(errors) : null,
      products: await this.products.listProducts(scope),
      statuses: LICENSE_STATUSES,
      types: LICENSE_TYPES,
      pagination: { ...pagination('/licenses', kept, page, size, result.total), label: 'Licence pages' },
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
   * The refusals to work through (docs/dashboard.md, Refused recently): every licence refused in the last 7 days, newest
   * refusal first, with its code, reason and machine; per product (`product`), with each product's count.
   */
  @Get('refused')
  @Render('licenses/refused')
  async refused(@Query() query: Record<string, unknown>, @CurrentProductScope() scope: ProductScope) {
    const refusedAt = await this.audit.recentlyRefused(REFUSED_MAX, scope);
    const found = await this.licenses.listLicensesForStaff({ ids: [...refusedAt.keys()], limit: REFUSED_MAX, offset: 0 }, {}, scope);
    const all = await withRefusals(this.audit, byNewestRefusal(found.items, refusedAt));
    const products = [...new Set(all.map((l) => l.product_code))].sort().map((code) => ({
      code,
      count: all.filter((l) => l.product_code === code).length,
      href: `/licenses/refused?${new URLSearchParams({ product: code }).toString()}`,
      current: code === text(query, 'product'),
    }));
    const product = products.find((p) => p.current)?.code;
    const rows = all.filter((l) => !product || l.product_code === product);
    const page = pageNumber(query.page);
    return {
      title: 'Refused recently',
      nav: 'refused',
      products,
      product,
      total: all.length,
      rows: rows
        .slice((page - 1) * LICENSES_PAGE_SIZE, page * LICENSES_PAGE_SIZE)
        .map((l) => ({ ...l, reason: l.refusal ? (REFUSAL_REASONS[l.refusal.code] ?? 'see the audit log') : '' })),
      pagination: {
        ...pagination('/licenses/refused', product ? { product } : {}, page, LICENSES_PAGE_SIZE, rows.length),
        label: 'Refusal pages',
      },
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
   * of the first matches, for the top bar's script and the command palette to show; empty for a search too short or not valid.
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

  private async activeProducts(scope: ProductScope): Promise<Product[]> {
    return (await this.products.listProducts(scope)).filter((p) => p.active);
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
}
