import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import type { RequestWithActor } from '../../common/auth/actor';
import { AppError } from '../../common/errors/app-error';
import { ErrorCode } from '../../common/errors/error-codes';
import { roleAtLeast, STAFF_ROLES, type StaffRole } from '../../staff/roles';
import { PRODUCT_SCOPED_ROUTES, ROUTE_RULES, routeKeys, type RouteAccess } from './route-rules';

const forbidden = (message: string) => new AppError(ErrorCode.FORBIDDEN, 403, message);

/** The strictest access among a handler's keys; undefined when one has no rule. */
function accessOf(keys: string[]): RouteAccess | undefined {
  const rules = keys.map((key) => ROUTE_RULES[key]);
  if (!rules.length || rules.some((r) => r === undefined)) return undefined;
  const roles = rules.filter((r): r is StaffRole => r !== 'anyone');
  return roles.length ? STAFF_ROLES.find((role) => roles.includes(role)) : 'anyone';
}

/**
 * Runs after the session guard on every dashboard route (docs/dashboard.md, Staff and roles): the route's rule from
 * ROUTE_RULES against the account's role (a 403 page), and an account limited to products only on routes that pass
 * its products on (which it leaves on the request for @CurrentProductScope). A route without a rule is refused.
 */
@Injectable()
export class RoleGuard implements CanActivate {
  private readonly logger = new Logger('Dashboard');

  canActivate(context: ExecutionContext): boolean {
    const keys = routeKeys(context.getClass(), context.getHandler());
    const access = accessOf(keys);
    if (access === undefined) {
      this.logger.error(`No role rule for ${keys.join(', ') || context.getHandler().name}: refused`);
      throw forbidden('This page has no access rule yet.');
    }
    const req = context.switchToHttp().getRequest<RequestWithActor>();
    const user = req.user;
    if (access === 'anyone' || !user) return true;
    refuseUnlessAllowed(user, access, keys);
    req.productScope = user.productIds;
    return true;
  }
}

/** 403 unless `user` may use routes of `access` and, when limited to products, every one of `keys` passes them on. */
function refuseUnlessAllowed(user: Pick<Express.User, 'role' | 'productIds'>, access: StaffRole, keys: string[]): void {
  if (!roleAtLeast(user.role, access))
    throw forbidden(`Your role (${user.role}) cannot do this: it needs ${access === 'owner' ? 'an owner' : `${access} or above`}.`);
  if (user.productIds !== null && !keys.every((key) => PRODUCT_SCOPED_ROUTES.has(key)))
    throw forbidden('Your account is limited to some products; this page covers every product.');
}

/**
 * The same 403 as the role guard would answer for the route `key` (`METHOD /path`): a confirmation page checks its
 * action's rule, so a control nobody may use is never one step from its form (docs/dashboard.md, Staff and roles).
 */
export function refuseUnlessRouteAllowed(user: Pick<Express.User, 'role' | 'productIds'> | undefined, key: string): void {
  const access = accessOf([key]);
  if (access === undefined) throw forbidden('This page has no access rule yet.');
  if (access === 'anyone') return;
  if (!user) throw forbidden('Sign in first.');
  refuseUnlessAllowed(user, access, [key]);
}
