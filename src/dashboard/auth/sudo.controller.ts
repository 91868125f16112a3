import { Get, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../../common/http/throttling';
import { asFormBody, formRaw, formText } from '../../html/forms';
import { PasskeysService } from '../../staff/second-factors/passkeys.service';
import { OidcService } from '../../staff/sso/oidc.service';
import { PASSWORD_MAX_LENGTH, UsersService } from '../../staff/users.service';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { AllowDuringEnrolment } from '../http/session.guard';
import { parsePasskeyAnswer, takeChallenge } from '../../staff/sign-in/passkey-challenge';
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
    private readonly users: UsersService,
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
    const account = req.user!;
    const body = asFormBody(req.body);
    const returnTo = safeReturnPath(formText(body, 'return_to'));
    await this.signIn.limiter.beforeAttempt(account.username);
    const factors = await this.signIn.factors.factorsOf(account.id);
    const sso = await this.oidc.isSsoAccount(account.id);
    const checked = sso
      ? null
      : await this.users.verifyCredentials(account.username, formRaw(body, 'password').slice(0, PASSWORD_MAX_LENGTH + 1));
    // The password alone is not enough for an account with a second factor: its code too, or the passkey form.
    const secondOk =
      checked === null || checked.id !== account.id
        ? false
        : factors.includes('totp')
          ? (await this.signIn.factors.verify(account.id, formText(body, 'code').replace(/\s/g, '').slice(0, 64))) !== null
          : !factors.includes('passkey');
    if (!secondOk) {
      await this.signIn.failed(req, account.username, 'sudo');
      return res.status(401).render('account/sudo', { ...(await this.locals(req, returnTo)), error: SUDO_FAILED_MESSAGE });
    }
    await this.signIn.limiter.succeeded(account.username);
    this.signIn.grantSudo(req);
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
    const account = req.user!;
    const body = asFormBody(req.body);
    const returnTo = safeReturnPath(formText(body, 'return_to'));
    const challenge = takeChallenge(req, 'sudo');
    const answer = parsePasskeyAnswer(formRaw(body, 'response'));
    // A single sign-on account proves itself at its provider only (docs/security.md, Single sign-on accounts).
    const sso = await this.oidc.isSsoAccount(account.id);
    const userId = !sso && challenge && answer ? await this.passkeys.authenticate(answer, challenge, account.id) : null;
    if (userId !== account.id) {
      await this.signIn.failed(req, account.username, 'sudo_passkey');
      return res.status(401).render('account/sudo', { ...(await this.locals(req, returnTo)), error: SUDO_PASSKEY_FAILED_MESSAGE });
    }
    this.signIn.grantSudo(req);
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
