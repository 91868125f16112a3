import { createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { AdminAuthorizer } from '../common/auth/admin-route.guard';
import type { RequestWithActor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { AdminAccess, AdminCredentials, satisfies } from './admin-credentials';
import { credentialFrom } from './api-keys';
import { FULL_ACCESS, isGlobalScope, ScopeRequirement } from '../common/auth/scopes';

type AdminRequest = RequestWithActor & { adminAccess?: AdminAccess };

/** The scopes and products of this request's admin credential (for handing out no more than it holds). */
export const CurrentAdminAccess = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AdminAccess | undefined => ctx.switchToHttp().getRequest<AdminRequest>().adminAccess,
);

/**
 * The admin authorizer behind @AdminRoute's guard: authenticates the credential (401), checks the route's scope
 * (403 FORBIDDEN), and leaves the actor and the product scope on the request for @CurrentActor and @CurrentProductScope.
 */
@Injectable()
export class CredentialAuthorizer implements AdminAuthorizer {
  constructor(private readonly credentials: AdminCredentials) {}

  async authorize(req: AdminRequest, required: ScopeRequirement): Promise<void> {
    const access = await this.credentials.authenticate(credentialFrom(req));
    if (!satisfies(access, required)) {
      const message =
        required === FULL_ACCESS
          ? 'This route needs a credential with every scope for every product'
          : isGlobalScope(required) && access.scopes.includes(required)
            ? `This route needs the scope ${required} for every product: this token is limited to products`
            : `This route needs the scope ${required}`;
      throw new AppError(ErrorCode.FORBIDDEN, 403, message, { required_scope: required });
    }
    req.actor = { type: 'admin_api', name: access.actorName, ip: req.ip ?? null };
    req.productScope = access.products;
    req.adminAccess = access;
  }
}
