import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { RequestWithActor } from './actor';
import { FULL_ACCESS, ScopeRequirement } from './scopes';

export const ADMIN_SCOPE_KEY = 'admin:required-scope';

/**
 * Authenticates an admin request's credential (401) and checks it holds `required` (403), leaving the actor and
 * the product scope on the request. auth/ provides it under ADMIN_AUTHORIZER, so a feature's admin controller needs
 * common/ only, not auth/ (docs/architecture.md, Module boundaries).
 */
export interface AdminAuthorizer {
  authorize(request: RequestWithActor, required: ScopeRequirement): Promise<void>;
}
export const ADMIN_AUTHORIZER = Symbol('ADMIN_AUTHORIZER');

/** The guard behind @AdminRoute: reads the route's scope and hands the request to the admin authorizer. */
@Injectable()
export class AdminRouteGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(ADMIN_AUTHORIZER) private readonly authorizer: AdminAuthorizer,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const required =
      this.reflector.getAllAndOverride<ScopeRequirement | undefined>(ADMIN_SCOPE_KEY, [context.getHandler(), context.getClass()]) ??
      FULL_ACCESS;
    await this.authorizer.authorize(context.switchToHttp().getRequest<RequestWithActor>(), required);
    return true;
  }
}
