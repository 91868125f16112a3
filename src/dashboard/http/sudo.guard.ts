import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { SignIn } from '../../staff/sign-in/sign-in';
import { routeKeys, SUDO_ROUTES } from './route-rules';
import { SudoRequired } from './session.guard';

/** Where the confirm-access page sends the browser back for a POST: the form it came from when that is ours. */
export function sudoReturnPath(req: Request): string {
  if (req.method === 'GET' || req.method === 'HEAD') return req.originalUrl;
  const referer = req.get('referer');
  if (referer) {
    try {
      const url = new URL(referer);
      if (url.host === req.get('host') && !url.pathname.startsWith('/account/sudo')) return `${url.pathname}${url.search}`;
    } catch {
      // Not a URL: fall back below.
    }
  }
  const root = req.path.split('/')[1] ?? '';
  return root === 'account' ? '/account/security' : `/${root}`;
}

/**
 * Runs after the role and CSRF guards (docs/security.md, Sudo mode): a route of SUDO_ROUTES needs the session's last
 * proof (sign-in or re-authentication) within STAFF_SUDO_MINUTES; else the confirm-access page, which returns here.
 */
@Injectable()
export class SudoGuard implements CanActivate {
  constructor(private readonly signIn: SignIn) {}

  canActivate(context: ExecutionContext): boolean {
    const keys = routeKeys(context.getClass(), context.getHandler());
    if (!keys.some((key) => SUDO_ROUTES.has(key))) return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (!req.user || this.signIn.hasSudo(req)) return true;
    throw new SudoRequired(sudoReturnPath(req));
  }
}
