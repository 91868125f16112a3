import { All, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ReleaseUpdatesService } from '../releases/release-updates.service';
import { ActivationService } from '../activation/activation.service';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { APP_CONFIG, type AppConfig, portalConfig } from '../config/app-config';
import { parseId } from '../html/ids';
import { formatTimestamp } from '../html/time';
import { seatLimit } from '../licenses/license-limits';
import type { LicenseDetailsDto } from '../licenses/dto/license.dto';
import { LicensesService } from '../licenses/licenses.service';
import {
  customerActor,
  licenceNotFound,
  machineNotFound,
  PortalController,
  portalCustomer,
  PortalLicenceIdPipe,
  setPortalFlash,
} from './portal-http';

const licenceIds = new PortalLicenceIdPipe();
type SeatParams = { id: string; seat: string };

const STORE_TITLES: Record<string, string> = { stripe: 'Stripe', paddle: 'Paddle', lemonsqueezy: 'Lemon Squeezy' };

/** DEACTIVATION_LIMIT_REACHED in words a customer reads (docs/portal.md, Releasing a machine). */
export function deactivationLimitMessage(details: Record<string, unknown> | undefined): string {
  const limit = typeof details?.max_deactivations_per_30_days === 'number' ? details.max_deactivations_per_30_days : 0;
  const next = typeof details?.next_allowed_at === 'string' ? details.next_allowed_at : null;
  if (limit === 0 || !next) return 'Machines of this licence cannot be freed here. Please contact support to move it to another machine.';
  const times = limit === 1 ? 'once' : `${limit} times`;
  return (
    `The machine is still bound: this licence lets you free a machine ${times} in 30 days, and that has been used up. ` +
    `You can free one again after ${formatTimestamp(next)}, or contact support if you need it sooner.`
  );
}

/**
 * What the page says when the client use case refuses (a 400 with a client code): the deactivation limit and a machine
 * already freed in words, any other code (a revoked or expired licence) with its own message. Anything else is thrown.
 */
function refusalMessage(err: unknown, machine: string): string {
  if (!(err instanceof AppError) || err.status !== 400) throw err;
  if (err.code === ErrorCode.DEACTIVATION_LIMIT_REACHED) return deactivationLimitMessage(err.details);
  if (err.code === ErrorCode.NOT_ACTIVATED) return `${machine} was already freed.`;
  return err.message;
}

/** The customer's licences, their machines, and what the customer may do with them (docs/portal.md, What a customer sees). */
@PortalController()
export class PortalLicensesController {
  private readonly storePortalUrls: Record<string, string>;

  constructor(
    private readonly licenses: LicensesService,
    private readonly activation: ActivationService,
    private readonly updates: ReleaseUpdatesService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.storePortalUrls = portalConfig(config).storePortalUrls;
  }

  @Get()
  async list(@Req() req: Request, @Res() res: Response): Promise<void> {
    const licenses = await this.licenses.customerLicenses(this.customer(req));
    res.render('portal/licenses', { title: 'Your licences', licenses: licenses.map((l) => this.view(l)) });
  }

  @Get('licenses/:id')
  async show(@Req() req: Request, @Res() res: Response, @Param('id', PortalLicenceIdPipe) id: number): Promise<void> {
    const license = await this.customerLicense(id, this.customer(req));
    const downloads = await this.updates.customerDownloads(license.license_key);
    res.render('portal/license', { title: `${license.product.name} licence`, license: this.view(license), downloads });
  }

  /**
   * "Free this machine" asks first, on a page of its own that needs no script (docs/portal.md, Releasing a machine):
   * what freeing does, the licence's limit, and the form that frees it.
   */
  @Get('licenses/:id/machines/:seat/release')
  async confirmRelease(@Req() req: Request, @Res() res: Response, @Param() params: SeatParams): Promise<void> {
    const { license, seat } = await this.seat(req, params);
    const machine = seat.hostname ?? 'this unnamed machine';
    res.render('portal/release', {
      title: `Free ${machine}?`,
      machine,
      seat,
      license: this.view(license),
      limit: license.policy.max_deactivations_per_30_days,
      noFreeing: license.policy.max_deactivations_per_30_days === 0,
    });
  }

  /** A client deactivation on the customer's behalf: it counts against max_deactivations_per_30_days. */
  @Post('licenses/:id/machines/:seat/release')
  async release(@Req() req: Request, @Res() res: Response, @Param() params: SeatParams): Promise<void> {
    const { email, license, seat } = await this.seat(req, params);
    const machine = seat.hostname ?? 'the machine';
    try {
      await this.activation.deactivate(
        { license_key: license.license_key, machine_fingerprint: seat.machine_fingerprint },
        customerActor(req, email),
      );
      setPortalFlash(req, 'success', `${machine} was freed. You can now activate the licence on another machine.`);
    } catch (err) {
      setPortalFlash(req, 'error', refusalMessage(err, machine));
    }
    res.redirect(303, `/portal/licenses/${license.id}`);
  }

  /** A licence file for a bound machine, as a download (POST: issuing one is recorded). */
  @Post('licenses/:id/machines/:seat/license-file')
  @HttpCode(200)
  async licenseFile(@Req() req: Request, @Res() res: Response, @Param() params: SeatParams): Promise<void> {
    const { email, license, seat } = await this.seat(req, params);
    let file: { license_file: string };
    try {
      file = await this.activation.issueLicenseFile(
        { license_key: license.license_key, machine_fingerprint: seat.machine_fingerprint },
        customerActor(req, email),
      );
    } catch (err) {
      setPortalFlash(req, 'error', refusalMessage(err, seat.hostname ?? 'the machine'));
      return res.redirect(303, `/portal/licenses/${license.id}`);
    }
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Disposition', `attachment; filename="${license.license_key}.lic"`);
    res.setHeader('Cache-Control', 'no-store');
    res.send(file.license_file);
  }

  private customer(req: Request): string {
    return portalCustomer(req) as string;
  }

  /** The customer's licence and one of its bound machines; anything else (or a malformed id) is a page that does not exist. */
  private async seat(req: Request, params: SeatParams) {
    const email = this.customer(req);
    const license = await this.customerLicense(licenceIds.transform(params.id), email);
    const seatId = parseId(params.seat);
    const seat = license.activations.find((a) => a.id === seatId);
    if (!seat) throw machineNotFound();
    return { email, license, seat };
  }

  /** The licence use case's 404 (staff words) in the customer's words (docs/portal.md, What a customer sees). */
  private async customerLicense(id: number, email: string): Promise<LicenseDetailsDto> {
    try {
      return await this.licenses.customerLicense(id, email);
    } catch (err) {
      if (err instanceof AppError && err.status === 404) throw licenceNotFound();
      throw err;
    }
  }

  private view(license: LicenseDetailsDto, now = new Date()) {
    const store = license.store;
    return {
      ...license,
      link_label: portalLicenceLabel(license, now),
      seats_used: license.activations.length,
      seat_limit: seatLimit(license.limits),
      store_title: store ? (STORE_TITLES[store.name] ?? store.name) : null,
      store_portal_url: store ? (this.storePortalUrls[store.name] ?? null) : null,
    };
  }
}

/**
 * A licence link in the customer's words (docs/portal.md, What a customer sees): the product, the key's last group and
 * the expiry, e.g. "POS Retail, key ending H8C5Z, valid until 31 January 2027".
 */
export function portalLicenceLabel(
  license: { product: { name: string }; license_key: string; expires_at: string | null },
  now: Date,
): string {
  const ending = license.license_key.split('-').pop() ?? license.license_key;
  const day = (iso: string) =>
    new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  const expiry =
    license.expires_at === null
      ? 'never expires'
      : Date.parse(license.expires_at) > now.getTime()
        ? `valid until ${day(license.expires_at)}`
        : `ended on ${day(license.expires_at)}`;
  return `${license.product.name}, key ending ${ending}, ${expiry}`;
}

/** Anything else under /portal: an HTML 404 in the portal's layout (the sign-in page without a session). Registered last. */
@PortalController()
export class PortalNotFoundController {
  @All('*rest')
  notFound(): never {
    throw AppError.notFound('Page');
  }
}
