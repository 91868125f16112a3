import { Get, Param, Post, Query, Render, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ActivationService } from '../../activation/activation.service';
import { RelayPoolIssuer } from '../../activation/relay-pools';
import { AuditService, type RecentRefusal } from '../../audit/audit.service';
import { CurrentProductScope, type ProductScope } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { UpdateLicenseDto } from '../../licenses/dto/create-license.dto';
import { ReleaseSeatsDto, RevokeLicenseDto } from '../../licenses/dto/license-actions.dto';
import type { LicenseDetailsDto } from '../../licenses/dto/license.dto';
import { seatLimit } from '../../licenses/license-limits';
import { LICENSE_TYPES } from '../../licenses/license-type';
import { LicensesService } from '../../licenses/licenses.service';
import { ChangeLicense } from '../../licenses/use-cases/change-license';
import { ExtendLicense } from '../../licenses/use-cases/extend-license';
import { unofferedFeaturesMessage } from '../../licenses/use-cases/license-rules';
import { ReleaseSeats } from '../../licenses/use-cases/release-seats';
import { RevokeLicense } from '../../licenses/use-cases/revoke-license';
import { SuspendLicense } from '../../licenses/use-cases/suspend-license';
import { UsageService } from '../../licenses/usage/usage.service';
import { MailService } from '../../mail/mail.service';
import type { Product } from '../../products/product.entity';
import { ProductsService } from '../../products/products.service';
import { checkDto } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { LicensePosted, type LicensePost } from '../http/license-post';
import { DashboardIdPipe } from '../http/id-param';
import { refuseUnlessRouteAllowed } from '../http/role.guard';
import { setFlash } from '../http/view-locals';
import { CHART_DAYS, CHART_SERIES, dailyChart } from '../views/daily-chart';
import { asFormBody, formText } from '../../html/forms';
import { CONFIRMATIONS, ConfirmAction } from './confirmations';
import {
  badRequestFields,
  editLicenseForm,
  formErrors,
  LicenseFormValues,
  licenseFormView,
  mergeErrors,
  readLicenseForm,
  toUpdateLicenseInput,
  withoutFields,
} from './license-form';

/** The licence page's recent client and customer events (docs/dashboard.md, Pages). */
const CLIENT_EVENTS = 10;
/** Who acts on a licence from outside: its client's machines and the customer in the portal. */
const TOP_EVENT_ACTORS = new Set(['client', 'customer']);
/** The licence page's chart: the client's activations and refusals (docs/dashboard.md, Charts). */
const LICENSE_CHART_SERIES = CHART_SERIES.slice(0, 2);

/** Why the client refused, in plain words, by its error code (docs/errors.md, Client codes). */
export const REFUSAL_REASONS: Record<string, string> = {
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
function refusedMachine(license: LicenseDetailsDto, refusal: RecentRefusal | undefined) {
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

/** One licence's page and its actions (docs/dashboard.md, Tasks); each action is a form posted through {@link formAction}. */
@DashboardController('licenses')
export class LicensePagesController {
  constructor(
    private readonly licenses: LicensesService,
    private readonly products: ProductsService,
    private readonly audit: AuditService,
    private readonly activation: ActivationService,
    private readonly mail: MailService,
    private readonly usage: UsageService,
    private readonly relayPools: RelayPoolIssuer,
    private readonly changing: ChangeLicense,
    private readonly extending: ExtendLicense,
    private readonly suspending: SuspendLicense,
    private readonly revoking: RevokeLicense,
    private readonly releasing: ReleaseSeats,
  ) {}

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
    const refused = refusedMachine(license, refusals.get(id));
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
      refusedMachine: refused,
      // docs/dashboard.md, Keyboard shortcuts: `r` opens the banner's release, else the only machine's.
      releaseShortcut: refused?.release?.href ?? (license.activations.length === 1 ? releaseHref(id, license.activations[0]) : null),
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
  async edit(@LicensePosted() { id, req, actor, scope }: LicensePost, @Res() res: Response) {
    const license = await this.licenses.getLicense(id, scope);
    const product = await this.productOf(license);
    const body = asFormBody(req.body);
    const form = { ...readLicenseForm({ ...body, product_code: product.code }, [product]), active: formText(body, 'active') === 'on' };
    const { input, errors } = toUpdateLicenseInput(form, license);
    const checked = await checkDto(UpdateLicenseDto, withoutFields(input, errors));
    const all = mergeErrors(mergeErrors(errors, checked.errors), editRules(form, product, license, input));
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
  renew(@LicensePosted() { act, id, actor, scope }: LicensePost, @Res() res: Response) {
    return act(res, async () => {
      const renewed = await this.extending.renew(id, actor, scope);
      return `Licence renewed until ${(renewed.expires_at as string).slice(0, 10)}.`;
    });
  }

  /** "Send the key again": a new license_issued message to the customer e-mail (docs/mail.md, When mail is sent). */
  @Post(':id/send-key')
  sendKey(@LicensePosted() { act, id, actor }: LicensePost, @Res() res: Response) {
    return act(res, async () => {
      const license = await this.licenses.getLicense(id);
      const address = await this.mail.resendKey(license, (await this.productOf(license)).id, actor);
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
    if (!Object.prototype.hasOwnProperty.call(CONFIRMATIONS, action)) throw AppError.notFound('Page');
    const confirmation = CONFIRMATIONS[action as ConfirmAction];
    // The page answers as its action does: support may not revoke, so it may not open the revoke page either.
    refuseUnlessRouteAllowed(req.user, `POST /licenses/:id/${confirmation.post}`);
    const license = await this.licenses.getLicense(id, scope);
    const seat = typeof machine === 'string' ? license.activations.find((s) => s.machine_fingerprint === machine) : undefined;
    if (action === 'release' && !seat) throw AppError.notFound('Seat');
    // docs/dashboard.md, Release a machine, release all, suspend, revoke: with nothing bound there is nothing to release.
    if (action === 'release-all' && license.activations.length === 0) throw AppError.notFound('Seat');
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
  revoke(@LicensePosted() { act, id, actor, scope }: LicensePost, @Res() res: Response) {
    return act(res, async (form) => {
      await this.revoking.revoke(id, (await form.checked(RevokeLicenseDto, ['reason'], ['reason'])).reason, actor, scope);
      return 'Licence revoked.';
    });
  }

  /** One machine's seat (machine_fingerprint given) or every seat, with an optional reason for the audit entry. */
  @Post(':id/release')
  release(@LicensePosted() { act, id, actor, scope }: LicensePost, @Res() res: Response) {
    return act(res, async (form) => {
      const result = await this.releasing.release(id, await form.checked(ReleaseSeatsDto, ['machine_fingerprint', 'reason']), actor, scope);
      return `${result.message}.`;
    });
  }

  @Post(':id/suspend')
  suspend(@LicensePosted() { act, id, actor, scope }: LicensePost, @Res() res: Response) {
    return act(res, async (form) => {
      // The reason is checked like the API's release reason (up to 500 characters).
      const { reason } = await form.checked(ReleaseSeatsDto, ['reason']);
      await this.suspending.suspend(id, reason ?? null, actor, scope);
      return 'Licence suspended: it no longer activates or validates until reinstated.';
    });
  }

  @Post(':id/reinstate')
  reinstate(@LicensePosted() { act, id, actor, scope }: LicensePost, @Res() res: Response) {
    return act(res, async () => {
      await this.suspending.reinstate(id, actor, scope);
      return 'Licence reinstated.';
    });
  }

  private async productOf(license: LicenseDetailsDto): Promise<Product> {
    const product = (await this.products.listProducts()).find((p) => p.code === license.product_code);
    if (!product) throw AppError.notFound('Product');
    return product;
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

/** The release confirmation of one machine, prefilled. */
const releaseHref = (id: number, seat: { machine_fingerprint: string }) =>
  `/licenses/${id}/confirm/release?${new URLSearchParams({ machine_fingerprint: seat.machine_fingerprint }).toString()}`;

/** The edit form's rules beyond the DTO: the product's features, an expiry that fits the type, no reviving a revoked licence. */
function editRules(
  form: LicenseFormValues & { active: boolean },
  product: Product,
  license: LicenseDetailsDto,
  input: Record<string, unknown>,
): FieldError[] {
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
  return rules;
}
