import { Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../../common/http/throttling';
import { AppError } from '../../common/errors/app-error';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { AllowAnonymous } from '../http/session.guard';
import { type SsoCeremony, SsoSignIn } from '../../staff/sign-in/sso-sign-in';
import { CeremonyCookies, SSO_CEREMONY } from './ceremony-cookie';
import { pageAfterSignIn } from './sign-in-pages';

/**
 * Sends the browser to the provider; what its answer must match travels in a sealed cookie, so an anonymous visitor
 * costs no session row (docs/security.md, Sessions). `sudo`: the signed-in account re-authenticates there
 * (docs/security.md, Sudo mode).
 */
export async function redirectToProvider(
  sso: SsoSignIn,
  ceremonies: CeremonyCookies,
  req: Request,
  res: Response,
  sudo?: SsoCeremony['sudo'],
): Promise<void> {
  const { url, ceremony } = await sso.start(sudo);
  ceremonies.seal(req, res, SSO_CEREMONY, ceremony);
  res.redirect(303, url);
}

/** Single sign-on with OpenID Connect (docs/dashboard.md, Single sign-on); 404 when OIDC_ISSUER is not set. */
@DashboardController('login/sso')
export class SsoController {
  constructor(
    private readonly sso: SsoSignIn,
    private readonly ceremonies: CeremonyCookies,
  ) {}

  @Get()
  @AllowAnonymous()
  @RateLimit('loginPage')
  async start(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.sso.enabled) throw AppError.notFound('Page');
    await redirectToProvider(this.sso, this.ceremonies, req, res);
  }

  @Get('callback')
  @AllowAnonymous()
  @RateLimit('login')
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.sso.enabled) throw AppError.notFound('Page');
    const ceremony = this.ceremonies.open<SsoCeremony>(req, res, SSO_CEREMONY);
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
    const next = await this.sso.finish(req, ceremony, query);
    res.redirect(303, typeof next === 'string' ? pageAfterSignIn(next) : next.returnTo);
  }
}
