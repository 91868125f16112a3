import { Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ActivationService, parseOfflineActivation } from '../../activation/activation.service';
import type { LicenseFileResponseDto } from '../../activation/dto/license-file.dto';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { AppError, FieldError } from '../../common/errors/app-error';
import { LicensesService } from '../../licenses/licenses.service';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { setFlash } from '../http/view-locals';
import { DEFAULT_MAX_INSTALLATIONS, seatLimit } from '../../licenses/license-limits';
import { isUsableStatus } from '../../licenses/license-status';

const VIEW = 'offline-activation';

/** A licence file as a download named after its licence key (docs/licences.md, Offline use and air-gapped machines: `<licence key>.lic`). */
function sendLicenseFile(res: Response, licenseKey: string, file: Pick<LicenseFileResponseDto, 'license_file'>): void {
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${licenseKey}.lic"`);
  res.setHeader('Cache-Control', 'no-store');
  res.send(file.license_file);
}

const messages = (err: AppError): string[] => {
  const fields = err.details?.fields as FieldError[] | undefined;
  return fields?.length ? fields.map((f) => `${f.field}: ${f.message}`) : [`${err.code}: ${err.message}`];
};

/**
 * Licence files on the dashboard: the air-gapped activation page (paste or upload the machine's request, see what it
 * binds, confirm, download `<key>.lic`) and the licence page's download for a bound machine. Both run the same
 * service methods as the API, with the signed-in user as the actor.
 */
@DashboardController()
export class LicenseFilesPagesController {
  constructor(
    private readonly activation: ActivationService,
    private readonly licenses: LicensesService,
  ) {}

  @Get('offline-activation')
  form(@Res() res: Response): void {
    res.render(VIEW, { title: 'Offline activation', nav: 'offline', request: '' });
  }

  /** Step 1: parse and check the request, show the licence, customer and machine it will bind. Nothing is stored. */
  @Post('offline-activation/preview')
  @HttpCode(200)
  async preview(@Req() req: Request, @Res() res: Response): Promise<void> {
    const request = formText(asFormBody(req.body), 'request');
    try {
      const input = await parseOfflineActivation(request);
      const license = await this.licenses.findLicenseByKey(input.license_key);
      const seatsUsed = license?.activations.length ?? 0;
      const limit = license ? seatLimit(license.limits) : DEFAULT_MAX_INSTALLATIONS;
      const rebinding = license?.activations.some((a) => a.machine_fingerprint === input.machine_fingerprint) ?? false;
      res.render(VIEW, {
        title: 'Offline activation',
        nav: 'offline',
        request,
        preview: {
          input,
          license,
          seatsUsed,
          seatLimit: limit,
          rebinding,
          full: !rebinding && seatsUsed >= limit,
          usable: license ? isUsableStatus(license.status) : false,
        },
      });
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      res.status(400).render(VIEW, { title: 'Offline activation', nav: 'offline', request, errors: messages(err) });
    }
  }

  /**
   * Step 2: bind exactly as /activate does, keep the file in the session and redirect to the page that offers it
   * (docs/dashboard.md, Messages after an action): the page changes and a reload binds nothing. A denial shows its code.
   */
  @Post('offline-activation')
  @HttpCode(200)
  async activate(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const request = formText(asFormBody(req.body), 'request');
    try {
      const input = await parseOfflineActivation(request);
      const file = await this.activation.activateOffline(request, actor);
      const licenseId = (await this.licenses.findLicenseByKey(input.license_key))?.id ?? null;
      req.session.offlineActivation = {
        licenseId,
        licenseKey: input.license_key,
        hostname: input.hostname,
        file: file.license_file,
        fresh: true,
      };
      res.redirect(303, '/offline-activation/done');
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      res.status(400).render(VIEW, { title: 'Offline activation', nav: 'offline', request, errors: messages(err) });
    }
  }

  /** Step 3: what was bound and the file's download link, followed once by the page script (docs/dashboard.md, Messages after an action). */
  @Get('offline-activation/done')
  done(@Req() req: Request, @Res() res: Response): void {
    const done = req.session.offlineActivation;
    if (!done) return res.redirect(303, '/offline-activation');
    const autoDownload = done.fresh;
    done.fresh = false;
    res.render('offline-activation-done', {
      title: 'Licence file ready',
      nav: 'offline',
      done,
      autoDownload,
      flash: { type: 'success', message: `Seat bound: ${done.hostname} now holds ${done.licenseKey}.` },
    });
  }

  /** The last offline activation's file from the session: already issued and audited, so a GET only reads it (docs/dashboard.md, Messages after an action). */
  @Get('offline-activation/done/file')
  doneFile(@Req() req: Request, @Res() res: Response): void {
    const done = req.session.offlineActivation;
    if (!done) return res.redirect(303, '/offline-activation');
    sendLicenseFile(res, done.licenseKey, { license_file: done.file });
  }

  /** The licence page's "Download licence file" for one bound machine. */
  @Post('licenses/:id/license-file')
  @HttpCode(200)
  async download(
    @Param('id', DashboardIdPipe) id: number,
    @Req() req: Request,
    @Res() res: Response,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    const license = await this.licenses.getLicense(id);
    const fingerprint = formText(asFormBody(req.body), 'machine_fingerprint');
    try {
      const file = await this.activation.issueLicenseFile({ license_key: license.license_key, machine_fingerprint: fingerprint }, actor);
      sendLicenseFile(res, license.license_key, file);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      setFlash(req, 'error', `No licence file: ${err.message}.`);
      res.redirect(303, `/licenses/${id}`);
    }
  }
}
