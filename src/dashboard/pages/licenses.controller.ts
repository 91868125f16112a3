import { Get, Param, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuditService } from '../../audit/audit.service';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { sendExport } from '../../common/http/export';
import { CreateLicenseDto } from '../../licenses/dto/create-license.dto';
import { ReleaseSeatsDto, RevokeLicenseDto } from '../../licenses/dto/license-actions.dto';
import { ExportLicensesQueryDto, ListLicensesQueryDto } from '../../licenses/dto/list-licenses.query';
import { LICENSE_STATUSES } from '../../licenses/license-status';
import { LICENSE_TYPES } from '../../licenses/license-type';
import { LicensesService } from '../../licenses/licenses.service';
import type { Product } from '../../products/product.entity';
import { ProductsService } from '../../products/products.service';
import { SigningService } from '../../signing/signing.service';
import { checkDto, errorsByField, validFilters } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formText } from '../http/forms';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';
import {
  emptyLicenseForm,
  LicenseFormValues,
  licenseFormView,
  readLicenseForm,
  toCreateLicenseInput,
  withFormLabels,
} from './license-form';
import { pageNumber, pagination } from './pagination';
import { payloadPreview } from './payload-preview';

export const LICENSES_PAGE_SIZE = 25;
const FILTERS = ['product', 'status', 'license_type', 'q'] as const;

/** The list filters given in the query string (non-empty text only). */
function readFilters(query: Record<string, unknown>): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const name of FILTERS) if (typeof query[name] === 'string' && query[name]) filters[name] = query[name];
  return filters;
}

const describeErrors = (errors: FieldError[]) => errors.map((e) => e.message).join('; ');

@DashboardController('licenses')
export class LicensesPagesController {
  constructor(
    private readonly licenses: LicensesService,
    private readonly products: ProductsService,
    private readonly audit: AuditService,
    private readonly signing: SigningService,
  ) {}

  /** Filters that fail the admin API's own validation are dropped and named, the rest still apply. */
  @Get()
  @Render('licenses/list')
  async list(@Query() query: Record<string, unknown>) {
    const filters = readFilters(query);
    const page = pageNumber(query.page);
    const paging = { limit: LICENSES_PAGE_SIZE, offset: (page - 1) * LICENSES_PAGE_SIZE };
    const { value, errors } = await validFilters(ListLicensesQueryDto, filters, paging);
    const result = await this.licenses.listLicenses(value);
    return {
      title: 'Licences',
      nav: 'licenses',
      licenses: result.items,
      filters,
      filterErrors: errors.length ? describeErrors(errors) : null,
      products: await this.products.listProducts(),
      statuses: LICENSE_STATUSES,
      types: LICENSE_TYPES,
      pagination: pagination('/licenses', filters, page, LICENSES_PAGE_SIZE, result.total),
      exportHref: `/licenses/export.csv?${new URLSearchParams(filters).toString()}`,
    };
  }

  /** "Export CSV": every licence matching the filters shown (invalid ones dropped, as on the list), streamed. */
  @Get('export.csv')
  async exportCsv(@Query() query: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const { value } = await validFilters(ExportLicensesQueryDto, readFilters(query), { format: 'csv' });
    sendExport(res, await this.licenses.exportLicenses(value), 'csv', 'licenses');
  }

  @Get('new')
  async newForm(@Query('product') product: unknown, @Res() res: Response): Promise<void> {
    const products = await this.activeProducts();
    const chosen = products.find((p) => p.code === product) ?? products[0];
    this.renderForm(res, 200, products, emptyLicenseForm(chosen), []);
  }

  /** The admin API's validation and service; a rejected form comes back with messages and the typed values. */
  @Post()
  async create(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const products = await this.activeProducts();
    const form = readLicenseForm(asFormBody(req.body), products);
    const { input, errors } = toCreateLicenseInput(form);
    if (errors.length) return this.renderForm(res, 400, products, form, errors);
    const checked = await checkDto(CreateLicenseDto, input);
    if (!checked.value) return this.renderForm(res, 400, products, form, checked.errors);
    try {
      const license = await this.licenses.createLicense(checked.value, actor);
      setFlash(req, 'success', `Licence ${license.licenseKey} created.`);
      res.redirect(303, `/licenses/${license.id}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      this.renderForm(
        res,
        400,
        products,
        form,
        (err.details?.fields as FieldError[] | undefined) ?? [{ field: 'form', message: err.message }],
      );
    }
  }

  @Get(':id')
  @Render('licenses/show')
  async show(@Param('id', DashboardIdPipe) id: number) {
    const license = await this.licenses.getLicense(id);
    const [history, audit, preview] = await Promise.all([
      this.licenses.listActivations(id),
      this.audit.listEntries({ license_id: id, limit: 100, offset: 0 }),
      payloadPreview(license, this.signing),
    ]);
    return { title: license.license_key, nav: 'licenses', license, history, audit: audit.items, auditTotal: audit.total, preview };
  }

  @Post(':id/revoke')
  async revoke(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.act(req, res, id, async () => {
      const { value, errors } = await checkDto(RevokeLicenseDto, { reason: formText(asFormBody(req.body), 'reason') });
      if (!value) throw AppError.validation(errors.length ? errors : [{ field: 'reason', message: 'give a reason' }]);
      await this.licenses.revokeLicense(id, value.reason, actor);
      return 'Licence revoked.';
    });
  }

  /** One machine's seat (machine_fingerprint given) or every seat. */
  @Post(':id/release')
  async release(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.act(req, res, id, async () => {
      const body = asFormBody(req.body);
      const plain: Record<string, unknown> = {};
      if (formText(body, 'machine_fingerprint')) plain.machine_fingerprint = formText(body, 'machine_fingerprint');
      if (formText(body, 'reason')) plain.reason = formText(body, 'reason');
      const { value, errors } = await checkDto(ReleaseSeatsDto, plain);
      if (!value) throw AppError.validation(errors);
      const result = await this.licenses.releaseSeats(id, value, actor);
      return `${result.message}.`;
    });
  }

  @Post(':id/suspend')
  async suspend(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.act(req, res, id, async () => {
      await this.licenses.updateLicense(id, { active: false }, actor);
      return 'Licence suspended: it no longer activates or validates until reinstated.';
    });
  }

  @Post(':id/reinstate')
  async reinstate(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    await this.act(req, res, id, async () => {
      await this.licenses.updateLicense(id, { active: true }, actor);
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

  private async activeProducts(): Promise<Product[]> {
    return (await this.products.listProducts()).filter((p) => p.active);
  }

  private renderForm(res: Response, status: number, products: Product[], form: LicenseFormValues, errors: FieldError[]): void {
    res.status(status).render('licenses/new', {
      title: 'New licence',
      nav: 'new',
      ...licenseFormView(products, form),
      errors: errorsByField(withFormLabels(errors)),
      hasErrors: errors.length > 0,
    });
  }
}
