import { Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { RateLimit } from '../../common/http/throttling';
import { AppError } from '../../common/errors/app-error';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { AllowAnonymous } from '../http/session.guard';
import { SsoSignIn } from './sso-sign-in';

/** Single sign-on with OpenID Connect (docs/dashboard.md, Single sign-on); 404 when OIDC_ISSUER is not set. */
@DashboardController('login/sso')
export class SsoController {
  constructor(private readonly sso: SsoSignIn) {}

  @Get()
  @AllowAnonymous()
  @RateLimit('loginPage')
  async start(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.sso.enabled) throw AppError.notFound('Page');
    res.redirect(303, await this.sso.start(req, res));
  }

  @Get('callback')
  @AllowAnonymous()
  @RateLimit('login')
  async callback(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.sso.enabled) throw AppError.notFound('Page');
    res.redirect(303, await this.sso.finish(req, res));
  }
}
