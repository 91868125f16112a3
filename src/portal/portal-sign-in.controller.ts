import { Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { toError } from '../common/errors/to-error';
import { asFormBody, formText } from '../dashboard/http/forms';
import { PortalAnonymous, PortalController, PortalFormTokens, portalCustomer } from './portal-http';
import { PORTAL_COOKIE } from './portal.setup';
import { EMAIL_FORMAT, normaliseEmail, PortalSignInService } from './portal-sign-in.service';

const EMAIL_MAX_LENGTH = 254;
export const LINK_SENT_MESSAGE = 'If we know this address, a sign-in link is on its way. It works once, for 15 minutes.';
export const LINK_UNUSABLE_MESSAGE = 'This sign-in link has expired, was already used, or is not complete. Ask for a new one below.';

/** Sign-in by e-mail link (docs/portal.md, Signing in). */
@PortalController()
export class PortalSignInController {
  constructor(
    private readonly signIns: PortalSignInService,
    private readonly forms: PortalFormTokens,
  ) {}

  @Get('login')
  @PortalAnonymous()
  loginPage(@Req() req: Request, @Res() res: Response): void {
    if (portalCustomer(req)) return res.redirect(302, '/portal');
    res.render('portal/login', { title: 'Sign in', formToken: this.forms.formToken(req, res) });
  }

  /** The same page for every well-formed address, known or not, within the limits or over them. */
  @Post('login')
  @HttpCode(200)
  @PortalAnonymous()
  async requestLink(@Req() req: Request, @Res() res: Response): Promise<void> {
    const typed = Array.from(formText(asFormBody(req.body), 'email'))
      .slice(0, EMAIL_MAX_LENGTH + 1)
      .join('');
    const email = normaliseEmail(typed);
    const error = !email
      ? 'Enter the e-mail address your licence was issued to.'
      : email.length > EMAIL_MAX_LENGTH || !EMAIL_FORMAT.test(email)
        ? 'Enter an e-mail address like name@example.com.'
        : undefined;
    if (error) {
      return res.status(400).render('portal/login', { title: 'Sign in', formToken: this.forms.formToken(req, res), email: typed, error });
    }
    await this.signIns.requestLink(req, email);
    res.render('portal/link-sent', { title: 'Check your e-mail', message: LINK_SENT_MESSAGE });
  }

  /** Shows a "Sign in" button and uses nothing: mail scanners open links before the customer does. */
  @Get('sign-in')
  @PortalAnonymous()
  async signInPage(@Req() req: Request, @Res() res: Response, @Query('token') token: unknown): Promise<void> {
    const text = typeof token === 'string' ? token : '';
    const usable = await this.signIns.linkUsable(text);
    res.status(usable ? 200 : 400).render('portal/sign-in', {
      title: 'Sign in',
      token: usable ? text : undefined,
      formToken: this.forms.formToken(req, res),
      error: usable ? undefined : LINK_UNUSABLE_MESSAGE,
    });
  }

  /** Uses the link once and starts a fresh portal session (a new session id: no fixation). */
  @Post('sign-in')
  @PortalAnonymous()
  async signIn(@Req() req: Request, @Res() res: Response): Promise<void> {
    const email = await this.signIns.signIn(req, formText(asFormBody(req.body), 'token'));
    if (!email) {
      return res
        .status(400)
        .render('portal/sign-in', { title: 'Sign in', formToken: this.forms.formToken(req, res), error: LINK_UNUSABLE_MESSAGE });
    }
    await new Promise<void>((resolve, reject) => req.session.regenerate((err) => (err ? reject(toError(err)) : resolve())));
    req.session.portal = { email, signedInAt: Date.now() };
    res.redirect(303, '/portal');
  }

  @Post('logout')
  async logout(@Req() req: Request, @Res() res: Response): Promise<void> {
    const email = portalCustomer(req);
    if (email) await this.signIns.signOut(req, email);
    await new Promise<void>((resolve, reject) => req.session.destroy((err) => (err ? reject(toError(err)) : resolve())));
    res.clearCookie(PORTAL_COOKIE, { path: '/portal' });
    res.redirect(303, '/portal/login');
  }
}
