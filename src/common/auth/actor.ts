import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** The kinds of actor the audit log records (its actor_type column). */
export const ACTOR_TYPES = ['admin_api', 'dashboard', 'client', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Who did something, as the audit log records it. */
export interface Actor {
  type: ActorType;
  name: string | null;
  ip: string | null;
}

export type RequestWithActor = Request & { actor?: Actor };

export function actorFromRequest(req: RequestWithActor): Actor {
  return req.actor ?? { type: 'client', name: req.ip ?? null, ip: req.ip ?? null };
}

/** The authenticated actor of this request (admin key id, dashboard user, or the client IP). */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor =>
  actorFromRequest(ctx.switchToHttp().getRequest<RequestWithActor>()),
);
