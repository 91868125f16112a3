import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { ActorType } from '../event-vocabulary';

/** Who did something, as the audit log records it. */
export interface Actor {
  type: ActorType;
  name: string | null;
  ip: string | null;
}

/**
 * The product ids an admin credential may see, or null for every product. Ids, not codes: a code can be renamed
 * and reused (docs/security.md, Review findings (round 3)). Services take it and put it into their queries
 * (never filter afterwards), so another product's licence is simply not found.
 */
export type ProductScope = readonly number[] | null;
export const ALL_PRODUCTS: ProductScope = null;

export type RequestWithActor = Request & { actor?: Actor; productScope?: ProductScope };

export function actorFromRequest(req: RequestWithActor): Actor {
  return req.actor ?? { type: 'client', name: req.ip ?? null, ip: req.ip ?? null };
}

/** The authenticated actor of this request (admin key id, token, dashboard user, or the client IP). */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor =>
  actorFromRequest(ctx.switchToHttp().getRequest<RequestWithActor>()),
);

/** The products the admin credential of this request may see (null: all), set by the admin guard. */
export const CurrentProductScope = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): ProductScope => ctx.switchToHttp().getRequest<RequestWithActor>().productScope ?? ALL_PRODUCTS,
);

/** Whether a credential with this scope may see the product with this id. */
export const productScopeIncludes = (scope: ProductScope, productId: number): boolean => scope === null || scope.includes(productId);

/** Whether `inner` (a token's or an endpoint's products) lies within `outer` (the credential's): null is every product. */
export const productScopeWithin = (inner: ProductScope, outer: ProductScope): boolean =>
  outer === null || (inner !== null && inner.every((id) => outer.includes(id)));

export const SYSTEM_ACTOR: Actor = { type: 'system', name: 'system', ip: null };

/** The person behind an actor, for a row's author column: a staff member's `staff:<username>` is the username. */
export const authorName = (actor: Actor): string =>
  (actor.type === 'dashboard' ? actor.name?.replace(/^staff:/, '') : actor.name) ?? 'unknown';
