import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { csrfTokenFor } from './csrf';
import { roleAtLeast } from '../../staff/roles';
import type { Flash } from './session-types';

/** Leaves a one-time message for the next page (post/redirect/get). */
export function setFlash(req: Request, type: Flash['type'], message: string): void {
  if (req.session) req.session.flash = { type, message };
}

/** What the layout needs on every page: who is logged in, the CSRF token for its forms, a pending message. */
export function viewLocals(req: Request): Record<string, unknown> {
  let flash: Flash | undefined;
  if (req.method === 'GET' && req.session?.flash) {
    flash = req.session.flash;
    delete req.session.flash;
  }
  return { currentUser: req.user, csrfToken: csrfTokenFor(req), flash, can: permissionsOf(req.user) };
}

/**
 * What the signed-in account may do, for templates to leave out the controls it cannot use (docs/dashboard.md, Staff
 * and roles); the role guard refuses them anyway. `allProducts`: pages that cover every product (limited accounts may not).
 */
export function permissionsOf(user: Express.User | undefined) {
  if (!user) return {};
  const allProducts = user.productIds === null;
  return {
    change: roleAtLeast(user.role, 'support'),
    changeAll: roleAtLeast(user.role, 'support') && allProducts,
    admin: roleAtLeast(user.role, 'admin'),
    adminAll: roleAtLeast(user.role, 'admin') && allProducts,
    manageStaff: user.role === 'owner' && allProducts,
    allProducts,
  };
}

/** Dashboard pages carry personal data and one-time tokens: never cached, always with the layout's locals. */
@Injectable()
export class ViewLocalsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    res.setHeader('Cache-Control', 'no-store');
    Object.assign(res.locals, viewLocals(req));
    return next.handle();
  }
}
