import { CanActivate, ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { csrfSync } from 'csrf-sync';
import type { Request } from 'express';
import './session-types';

export const CSRF_FIELD = '_csrf';

/** Synchroniser tokens (csrf-sync): one per session, sent back in every POST form as `_csrf`. */
const csrf = csrfSync({
  getTokenFromRequest: (req) => {
    const fromForm = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
    return typeof fromForm === 'string' ? fromForm : (req.headers['x-csrf-token'] as string | undefined);
  },
});

/** The session's token, created on first use (the session is then saved, so the form can post back). */
export function csrfTokenFor(req: Request): string | undefined {
  return req.session ? csrf.generateToken(req) : undefined;
}

/** Every state-changing dashboard request must carry the session's token: else 403 before anything runs. */
@Injectable()
export class CsrfGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    if (['GET', 'HEAD', 'OPTIONS'].includes(req.method)) return true;
    if (req.session && csrf.isRequestValid(req)) return true;
    throw new ForbiddenException('The form has expired or did not come from this site. Reload the page and try again.');
  }
}
