import { Get, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../../common/http/throttling';
import { asFormBody, formRaw, formText } from '../../html/forms';
import { PasskeysService } from '../../staff/second-factors/passkeys.service';
import { OidcService } from '../../staff/sso/oidc.service';
import { PASSWORD_MAX_LENGTH } from '../../staff/users.service';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { AllowDuringEnrolment } from '../http/session.guard';
import { parsePasskeyAnswer, takeChallenge } from '../../staff/sign-in/passkey-challenge';
import { Reauthentication } from '../../staff/sign-in/reauthentication';
import { SignIn } from '../../staff/sign-in/sign-in';
import { SsoSignIn } from '../../staff/sign-in/sso-sign-in';
import { CeremonyCookies } from './ceremony-cookie';
import { redirectToProvider } from './sso.controller';

export const SUDO_FAILED_MESSAGE = 'That did not confirm your identity. Check your password and code, and try again.';
export const SUDO_PASSKEY_FAILED_MESSAGE = 'That passkey was not accepted. Try again, or use another way to confirm.';

/** A path of this site to return to: never another origin (`//host`, `/\host`), else the dashboard. */
export function safeReturnPath(value: string): string {
  return /^\/(?![/\\])[^\s\\]*$/.test(value) && value.length <= 2000 && !value.startsWith('/account/sudo') ? value : '/dashboard';
}

/**
 * The confirm-access page (docs/security.md, Sudo mode), after GitHub's sudo mode: before a sensitive action, an account
 * that has not proved itself within STAFF_SUDO_MINUTES does so again (its password with its second factor, or a
 * passkey; a single sign-on account at its provider), then returns to the page it came from.
 */
@DashboardController('account/sudo')
@AllowDuringEnrolment()
export class SudoController {
  constructor(
    private readonly signIn: SignIn,
    private readonly reauthentication: Reauthentication,
    private readonly passkeys: PasskeysService,
    private readonly oidc: OidcService,
    private readonly sso: SsoSignIn,
    private readonly ceremonies: CeremonyCookies,
  ) {}

  @Get()
  async page(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.render('account/sudo', await this.locals(req));
  }

  @Post()
  @RateLimit('login')
  async confirm(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = asFormBody(req.body);
    const returnTo = safeReturnPath(formText(body, 'return_to'));
    const password = formRaw(body, 'password').slice(0, PASSWORD_MAX_LENGTH + 1);
    const code = formText(body, 'code').replace(/\s/g, '').slice(0, 64);
    if (!(await this.reauthentication.withPassword(req, req.user!, password, code)))
      return res.status(401).render('account/sudo', { ...(await this.locals(req, returnTo)), error: SUDO_FAILED_MESSAGE });
    res.redirect(303, returnTo);
  }

  @Post('passkey/options')
  @RateLimit('login')
  async passkeyOptions(@Req() req: Request, @Res() res: Response): Promise<void> {
    const options = await this.passkeys.authenticationOptions(req.user!.id);
    req.session.passkeyChallenge = { challenge: options.challenge, purpose: 'sudo', at: Date.now() };
    res.status(200).json(options);
  }

  @Post('passkey')
  @RateLimit('login')
  async passkey(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = asFormBody(req.body);
    const returnTo = safeReturnPath(formText(body, 'return_to'));
    const challenge = takeChallenge(req, 'sudo');
    const answer = parsePasskeyAnswer(formRaw(body, 'response'));
    if (!(await this.reauthentication.withPasskey(req, req.user!, answer, challenge)))
      return res.status(401).render('account/sudo', { ...(await this.locals(req, returnTo)), error: SUDO_PASSKEY_FAILED_MESSAGE });
    res.redirect(303, returnTo);
  }

  /** A single sign-on account confirms at its provider; the callback renews the sudo time and returns. */
  @Post('sso')
  async viaProvider(@Req() req: Request, @Res() res: Response): Promise<void> {
    const returnTo = safeReturnPath(formText(asFormBody(req.body), 'return_to'));
    if (!this.sso.enabled || !(await this.oidc.isSsoAccount(req.user!.id)))
      return res.status(400).render('account/sudo', { ...(await this.locals(req, returnTo)), error: SUDO_FAILED_MESSAGE });
    await redirectToProvider(this.sso, this.ceremonies, req, res, { userId: req.user!.id, returnTo });
  }

  private async locals(req: Request, returnTo?: string) {
    const account = req.user!;
    const [factors, sso] = await Promise.all([this.signIn.factors.factorsOf(account.id), this.oidc.isSsoAccount(account.id)]);
    const queried = typeof req.query.return_to === 'string' ? req.query.return_to : '';
    return {
      title: 'Confirm access',
      nav: 'security',
      returnTo: returnTo ?? safeReturnPath(queried),
      sso,
      password: !sso,
      totp: !sso && factors.includes('totp'),
      passkey: !sso && factors.includes('passkey'),
      passwordOnlyRefused: !sso && !factors.includes('totp') && factors.includes('passkey'),
      minutes: this.signIn.sudoMinutes,
      passkeyScripts: true,
    };
  }
}
