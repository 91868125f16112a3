import { CanActivate, ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { csrfSync } from 'csrf-sync';
import type { Request } from 'express';
import { LoginFormTokens } from '../../html/login-form-token';
import { InviteFormTokens, STAFF_INVITE_FORM_PATH } from '../auth/staff-login-form';
import { isAnonymousRoute } from './session.guard';
import './session-types';

export const CSRF_FIELD = '_csrf';
export const CSRF_REFUSED_MESSAGE = 'The form has expired or did not come from this site. Reload the page and try again.';

const formToken = (req: Request): unknown => (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];

/** Synchroniser tokens (csrf-sync): one per logged-in session, sent back in every POST form as `_csrf` (or the X-CSRF-Token header). */
const csrf = csrfSync({
  getTokenFromRequest: (req) => {
    const fromForm = formToken(req);
    return typeof fromForm === 'string' ? fromForm : (req.headers['x-csrf-token'] as string | undefined);
  },
});

/**
 * The session's token for a logged-in user, created on first use. Anonymous visitors get none: storing one would
 * save a session for every visitor of the login page (which carries its own stateless token, LoginFormTokens).
 */
export function csrfTokenFor(req: Request): string | undefined {
  return req.user && req.session ? csrf.generateToken(req) : undefined;
}

/**
 * Every state-changing dashboard request must carry a CSRF token, else 403 before anything runs: the session's token
 * on logged-in routes, an anonymous form's cookie token on the anonymous ones (POST /login, an invitation's accept form).
 */
@Injectable()
export class CsrfGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly loginForm: LoginFormTokens,
    private readonly inviteForm: InviteFormTokens,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    if (['GET', 'HEAD', 'OPTIONS'].includes(req.method)) return true;
    const anonymousForm = req.path.startsWith(`${STAFF_INVITE_FORM_PATH}/`) ? this.inviteForm : this.loginForm;
    const valid = isAnonymousRoute(this.reflector, context)
      ? anonymousForm.verify(req, formToken(req))
      : Boolean(req.session) && csrf.isRequestValid(req);
    if (valid) return true;
    throw new ForbiddenException(CSRF_REFUSED_MESSAGE);
  }
}
