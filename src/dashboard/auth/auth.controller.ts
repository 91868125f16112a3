import { Get, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../../common/http/throttling';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formRaw, formText } from '../../html/forms';
import { AllowAnonymous, AllowDuringEnrolment, dashboardActor } from '../http/session.guard';
import { SESSION_COOKIE } from '../dashboard.setup';
import { PasskeysService } from '../../staff/second-factors/passkeys.service';
import { PASSWORD_MAX_LENGTH, UsersService } from '../../staff/users.service';
import { staffActorName } from '../../staff/staff-actor';
import { parsePasskeyAnswer } from '../../staff/sign-in/passkey-challenge';
import { PasskeySignIn } from '../../staff/sign-in/passkey-sign-in';
import { type PasswordRefusal, PasswordSignIn } from '../../staff/sign-in/password-sign-in';
import { SignIn } from '../../staff/sign-in/sign-in';
import { SsoSignIn } from '../../staff/sign-in/sso-sign-in';
import { CeremonyCookies, PASSKEY_CEREMONY } from './ceremony-cookie';
import { DashboardPassport } from './dashboard-passport';
import { LoginFormTokens } from '../../html/login-form-token';
import { pageAfterSignIn } from './sign-in-pages';

export const LOGIN_FAILED_MESSAGE = 'Invalid username or password.';
export const PASSKEY_FAILED_MESSAGE = 'That passkey was not accepted. Try again, or use another way to sign in.';
export const DISABLED_ACCOUNT_MESSAGE = 'This account is disabled. Ask an owner of this dashboard to enable it again.';
export const SSO_ACCOUNT_MESSAGE = 'This account signs in with single sign-on: use "Sign in with single sign-on".';
export const SECOND_FACTOR_FAILED_MESSAGE = 'That code is not valid. Use a new code from your app, or an unused recovery code.';

/** The login form's message for each refused password (one for every wrong name or password). */
const PASSWORD_REFUSALS: Record<PasswordRefusal, string> = {
  refused: LOGIN_FAILED_MESSAGE,
  disabled: DISABLED_ACCOUNT_MESSAGE,
  'sso-account': SSO_ACCOUNT_MESSAGE,
};
const isPasswordRefusal = (next: string): next is PasswordRefusal => Object.hasOwn(PASSWORD_REFUSALS, next);

@DashboardController()
export class AuthController {
  constructor(
    private readonly passport: DashboardPassport,
    private readonly users: UsersService,
    private readonly loginForm: LoginFormTokens,
    private readonly signIn: SignIn,
    private readonly sso: SsoSignIn,
    private readonly passkeys: PasskeysService,
    private readonly ceremonies: CeremonyCookies,
    private readonly passwordSignIn: PasswordSignIn,
    private readonly passkeySignIn: PasskeySignIn,
  ) {}

  @Get()
  home(@Res() res: Response): void {
    res.redirect(302, '/dashboard');
  }

  // Rate-limited although it stores nothing: each answer still renders a page and signs a token.
  @Get('login')
  @AllowAnonymous()
  @RateLimit('loginPage')
  loginPage(@Req() req: Request, @Res() res: Response): void {
    if (req.user) return res.redirect(302, '/dashboard');
    res.render('login', this.loginLocals(req, res));
  }

  /** One generic message for every failure, so the form does not reveal which user names exist. */
  @Post('login')
  @AllowAnonymous()
  @RateLimit('login')
  async login(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = asFormBody(req.body);
    // Cut by code points, never inside a surrogate pair (the name goes to the audit log as typed).
    const username = Array.from(formText(body, 'username')).slice(0, 64).join('');
    // passport-local reads the body itself: hand it only single, bounded strings.
    req.body = { username, password: formRaw(body, 'password').slice(0, PASSWORD_MAX_LENGTH + 1) };
    await this.passwordSignIn.beforeCheck(username);
    const next = await this.passwordSignIn.afterCheck(req, username, await this.passport.authenticate(req, res));
    if (isPasswordRefusal(next))
      return res.status(401).render('login', { ...this.loginLocals(req, res), error: PASSWORD_REFUSALS[next], username });
    res.redirect(303, pageAfterSignIn(next));
  }

  /** The second step of a password sign-in (docs/dashboard.md, Second factors): a TOTP code or a recovery code. */
  @Get('login/verify')
  @AllowAnonymous()
  @RateLimit('loginPage')
  async verifyPage(@Req() req: Request, @Res() res: Response): Promise<void> {
    const user = await this.signIn.pending(req);
    if (!user) return res.redirect(302, '/login');
    res.render('login-verify', await this.verifyLocals(req, res, user.id));
  }

  @Post('login/verify')
  @AllowAnonymous()
  @RateLimit('login')
  async verify(@Req() req: Request, @Res() res: Response): Promise<void> {
    const user = await this.signIn.pending(req);
    if (!user) return res.redirect(303, '/login');
    const next = await this.passwordSignIn.secondFactor(req, user, formText(asFormBody(req.body), 'code').slice(0, 64));
    if (next === 'refused')
      return res
        .status(401)
        .render('login-verify', { ...(await this.verifyLocals(req, res, user.id)), error: SECOND_FACTOR_FAILED_MESSAGE });
    res.redirect(303, pageAfterSignIn(next));
  }

  /**
   * Options for navigator.credentials.get() (docs/dashboard.md, Passkeys): after a password, that account's passkeys;
   * without one, any discoverable passkey of this site. The challenge waits in a sealed cookie, not the session: an
   * anonymous visitor costs no session row (docs/security.md, Sessions).
   */
  @Post('login/passkey/options')
  @AllowAnonymous()
  @RateLimit('login')
  async passkeyOptions(@Req() req: Request, @Res() res: Response): Promise<void> {
    const pending = await this.signIn.pending(req);
    const options = await this.passkeys.authenticationOptions(pending?.id ?? null);
    this.ceremonies.seal(req, res, PASSKEY_CEREMONY, { challenge: options.challenge, purpose: pending ? 'second-factor' : 'sign-in' });
    res.status(200).json(options);
  }

  @Post('login/passkey')
  @AllowAnonymous()
  @RateLimit('login')
  async passkey(@Req() req: Request, @Res() res: Response): Promise<void> {
    const pending = await this.signIn.pending(req);
    const ceremony = this.ceremonies.open<{ challenge?: unknown; purpose?: unknown }>(req, res, PASSKEY_CEREMONY);
    const purpose = pending ? 'second-factor' : 'sign-in';
    const challenge = ceremony?.purpose === purpose && typeof ceremony.challenge === 'string' ? ceremony.challenge : null;
    const answer = parsePasskeyAnswer(formRaw(asFormBody(req.body), 'response'));
    const next = await this.passkeySignIn.finish(req, pending, answer, challenge);
    if (next === 'sso-account') return res.status(401).render('login', { ...this.loginLocals(req, res), error: SSO_ACCOUNT_MESSAGE });
    if (next === 'refused') {
      if (pending)
        return res
          .status(401)
          .render('login-verify', { ...(await this.verifyLocals(req, res, pending.id)), error: PASSKEY_FAILED_MESSAGE });
      return res.status(401).render('login', { ...this.loginLocals(req, res), error: PASSKEY_FAILED_MESSAGE });
    }
    res.redirect(303, pageAfterSignIn(next));
  }

  private loginLocals(req: Request, res: Response) {
    return { title: 'Log in', csrfToken: this.loginForm.formToken(req, res), sso: this.sso.enabled, passkeyScripts: true };
  }

  private async verifyLocals(req: Request, res: Response, userId: number) {
    const factors = await this.signIn.factors.factorsOf(userId);
    return {
      title: 'Second factor',
      csrfToken: this.loginForm.formToken(req, res),
      totp: factors.includes('totp'),
      passkey: factors.includes('passkey'),
      passkeyScripts: true,
    };
  }

  @Post('logout')
  @AllowDuringEnrolment()
  async logout(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.users.recordLogout(dashboardActor(req, req.user ? staffActorName(req.user.username) : null));
    await this.passport.logOut(req);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.redirect(303, '/login');
  }
}
