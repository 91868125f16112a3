import { Get, Post, Req, Res, ServiceUnavailableException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../../common/http/throttling';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { asFormBody, formRaw, formText } from '../http/forms';
import { AllowAnonymous, dashboardActor, staffActorName } from '../http/session.guard';
import { SESSION_COOKIE } from '../dashboard.setup';
import { PASSWORD_MAX_LENGTH, UsersService } from '../../staff/users.service';
import { DashboardPassport } from './dashboard-passport';
import { LoginFormTokens } from './login-form-token';

export const LOGIN_FAILED_MESSAGE = 'Invalid username or password.';

@DashboardController()
export class AuthController {
  constructor(
    private readonly passport: DashboardPassport,
    private readonly users: UsersService,
    private readonly loginForm: LoginFormTokens,
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
    res.render('login', { title: 'Log in', csrfToken: this.loginForm.formToken(req, res) });
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
    const user = await this.passport.authenticate(req, res);
    if (!user) {
      // The actor is the name as typed: nobody was authenticated (docs/dashboard.md, Staff and roles).
      await this.users.recordLoginFailed(dashboardActor(req, username || null), username);
      const csrfToken = this.loginForm.formToken(req, res);
      return res.status(401).render('login', { title: 'Log in', error: LOGIN_FAILED_MESSAGE, username, csrfToken });
    }
    // Logging in is the first write to the session store (nothing is stored before): its outage is a 503, not a bug.
    await this.passport.logIn(req, user).catch(() => {
      throw new ServiceUnavailableException('Sessions cannot be stored right now; try again shortly.');
    });
    await this.users.recordLogin(user, dashboardActor(req, staffActorName(user.username)));
    res.redirect(303, '/dashboard');
  }

  @Post('logout')
  async logout(@Req() req: Request, @Res() res: Response): Promise<void> {
    await this.users.recordLogout(dashboardActor(req, req.user ? staffActorName(req.user.username) : null));
    await this.passport.logOut(req);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.redirect(303, '/login');
  }
}
