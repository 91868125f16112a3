import { Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, CurrentActor } from '../../common/auth/actor';
import { PasskeysService } from '../../staff/second-factors/passkeys.service';
import { SecondFactorsService } from '../../staff/second-factors/second-factors.service';
import { parsePasskeyAnswer, takeChallenge } from '../../staff/sign-in/passkey-challenge';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formRaw, formText } from '../../html/forms';
import { DashboardIdPipe } from '../http/id-param';
import { AllowDuringEnrolment } from '../http/session.guard';
import { setFlash } from '../http/view-locals';

/** The codes as the text file a member downloads (a data: link, so the codes never travel again). */
const codesText = (codes: string[]) =>
  `data:text/plain;charset=utf-8,${encodeURIComponent(`Recovery codes (each works once)\n\n${codes.join('\n')}\n`)}`;

export const TOTP_CONFIRM_FAILED_MESSAGE = 'That code does not match. Check the time on your phone and enter the newest code.';

/**
 * The signed-in account's own security page (docs/dashboard.md, Second factors): enrol TOTP (QR code and otpauth://
 * URI, confirmed by a first code, then ten recovery codes shown once) and passkeys. With STAFF_REQUIRE_2FA an account
 * without a second factor is kept here until it has one.
 */
@DashboardController('account/security')
@AllowDuringEnrolment()
export class SecurityPageController {
  constructor(
    private readonly factors: SecondFactorsService,
    private readonly passkeys: PasskeysService,
  ) {}

  @Get()
  async page(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.render('account/security', await this.locals(req));
  }

  @Post('totp')
  async startTotp(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!(await this.factors.startTotp(req.user!))) setFlash(req, 'error', 'This account already has an authenticator app.');
    res.redirect(303, '/account/security');
  }

  /** The pending secret's QR code as a PNG from our own origin (the CSP allows images from nowhere else). */
  @Get('totp.png')
  async totpQr(@Req() req: Request, @Res() res: Response): Promise<void> {
    const png = await this.factors.pendingTotpQr(req.user!);
    if (!png) return void res.status(404).type('text/plain').send('No authenticator app is waiting to be confirmed.');
    res.type('image/png').send(png);
  }

  @Post('totp/confirm')
  async confirmTotp(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const code = formText(asFormBody(req.body), 'code').replace(/\s/g, '').slice(0, 16);
    const recoveryCodes = await this.factors.confirmTotp(req.user!, code, actor);
    if (!recoveryCodes) {
      return res.status(422).render('account/security', { ...(await this.locals(req)), totpError: TOTP_CONFIRM_FAILED_MESSAGE });
    }
    if (req.session) delete req.session.enrolmentRequired;
    // Shown once, on this answer only: never stored in clear, never put in the session.
    res
      .status(200)
      .render('account/recovery-codes', { title: 'Recovery codes', nav: 'security', recoveryCodes, codesText: codesText(recoveryCodes) });
  }

  /** Options for navigator.credentials.create(); the challenge waits in the session for the answer. */
  @Post('passkeys/options')
  async passkeyOptions(@Req() req: Request, @Res() res: Response): Promise<void> {
    const options = await this.passkeys.registrationOptions(req.user!);
    req.session.passkeyChallenge = { challenge: options.challenge, purpose: 'register', at: Date.now() };
    res.status(200).json(options);
  }

  @Post('passkeys')
  async registerPasskey(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const challenge = takeChallenge(req, 'register');
    const response = parsePasskeyAnswer(formRaw(asFormBody(req.body), 'response'));
    const added = challenge !== null && response !== null && (await this.passkeys.register(req.user!, response, challenge, actor));
    if (added && req.session) delete req.session.enrolmentRequired;
    setFlash(req, added ? 'success' : 'error', added ? 'Passkey added.' : 'The passkey was not added. Try again.');
    res.redirect(303, '/account/security');
  }

  /** Removes the account's own authenticator app and its recovery codes (under sudo: docs/security.md, Sudo mode). */
  @Post('totp/remove')
  async removeTotp(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const removed = await this.factors.removeOwn(req.user!, { kind: 'totp' }, actor);
    setFlash(
      req,
      removed ? 'success' : 'error',
      removed ? 'Authenticator app removed, with its recovery codes.' : 'There was no authenticator app.',
    );
    res.redirect(303, '/account/security');
  }

  @Post('passkeys/:id/remove')
  async removePasskey(@Param('id', DashboardIdPipe) id: number, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor) {
    const removed = await this.factors.removeOwn(req.user!, { kind: 'passkey', id }, actor);
    setFlash(req, removed ? 'success' : 'error', removed ? 'Passkey removed.' : 'No such passkey on this account.');
    res.redirect(303, '/account/security');
  }

  /** Ten new recovery codes; the old ones stop working. Shown once on this answer, with copy and download. */
  @Post('recovery-codes')
  async regenerateRecoveryCodes(@Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const recoveryCodes = await this.factors.regenerateRecoveryCodes(req.user!, actor);
    if (!recoveryCodes) {
      setFlash(req, 'error', 'Recovery codes come with an authenticator app: set one up first.');
      return res.redirect(303, '/account/security');
    }
    res
      .status(200)
      .render('account/recovery-codes', { title: 'Recovery codes', nav: 'security', recoveryCodes, codesText: codesText(recoveryCodes) });
  }

  private async locals(req: Request) {
    const account = req.user!;
    const [factors, pending, unusedCodes, passkeys] = await Promise.all([
      this.factors.factorsOf(account.id),
      this.factors.pendingTotp(account),
      this.factors.unusedRecoveryCodes(account.id),
      this.factors.passkeysOf(account.id),
    ]);
    return {
      title: 'Security',
      nav: 'security',
      enrolmentRequired: req.session?.enrolmentRequired === true,
      totp: factors.includes('totp'),
      passkey: factors.includes('passkey'),
      pending,
      unusedCodes,
      passkeys: passkeys.map((p, i) => ({ ...p, label: `Passkey ${i + 1}` })),
      passkeyScripts: true,
    };
  }
}
