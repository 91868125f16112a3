import { applyDecorators, SetMetadata, UseGuards, UseInterceptors, UsePipes } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiExtension,
  ApiForbiddenResponse,
  ApiSecurity,
  ApiServiceUnavailableResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorResponseDto } from '../errors/error-response.dto';
import { refuseUnexpectedBody } from '../http/empty-body';
import { RateLimit } from '../http/throttling';
import { strictValidationPipe } from '../http/validation.pipe';
import { ADMIN_SCOPE_KEY, AdminRouteGuard } from './admin-route.guard';
import { FULL_ACCESS, ScopeRequirement } from './scopes';

export const API_KEY_SCHEME = 'api-key';
export const BEARER_SCHEME = 'bearer';
/** The OpenAPI extension naming each admin operation's scope (read by the scope matrix test). */
export const SCOPE_EXTENSION = 'x-required-scope';

/**
 * Marks a route (or every route of a controller) as admin API requiring `scope`: the per-IP 'admin' rate
 * limit (checked first, so key guessing counts too), the credential and scope guard, the strict validation
 * pipe (unknown fields rejected; a body on a route without one too), and the Swagger security schemes, scope and 401/403 answers, in one
 * decorator so they cannot drift. Put it on the controller, or on each method when the scopes differ
 * (not both: the guard would run twice).
 */
export function AdminRoute(scope: ScopeRequirement) {
  return applyDecorators(
    RateLimit('admin'),
    SetMetadata(ADMIN_SCOPE_KEY, scope),
    UseGuards(AdminRouteGuard),
    UsePipes(strictValidationPipe),
    UseInterceptors(refuseUnexpectedBody),
    ApiSecurity(API_KEY_SCHEME),
    ApiBearerAuth(BEARER_SCHEME),
    ApiExtension(SCOPE_EXTENSION, scope),
    ApiUnauthorizedResponse({ description: 'UNAUTHORIZED: missing, wrong, expired or revoked credential', type: ErrorResponseDto }),
    ApiForbiddenResponse({
      description: scope === FULL_ACCESS ? 'FORBIDDEN: needs every scope for every product' : `FORBIDDEN: needs the scope ${scope}`,
      type: ErrorResponseDto,
    }),
    ApiBadRequestResponse({ description: 'VALIDATION_ERROR', type: ErrorResponseDto }),
    ApiServiceUnavailableResponse({ description: 'Database unavailable', type: ErrorResponseDto }),
  );
}

/**
 * @deprecated the pre-scope decorator: full access only. Convert with `@AdminRoute('<scope>')`.
 * @public kept for routes on branches written before scopes (docs/admin-api.md), though no route here uses it now.
 */
export const AdminApi = () => AdminRoute(FULL_ACCESS);
