import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { RequestWithActor } from '../../common/auth/actor';
import { staffActorName, visitorActor } from '../../staff/staff-actor';

const ANONYMOUS_KEY = 'dashboard:anonymous';
const DURING_ENROLMENT_KEY = 'dashboard:during-enrolment';

/** A dashboard route reachable without a session (the login page only). */
export const AllowAnonymous = () => SetMetadata(ANONYMOUS_KEY, true);

export const isAnonymousRoute = (reflector: Reflector, context: ExecutionContext): boolean =>
  reflector.getAllAndOverride<boolean>(ANONYMOUS_KEY, [context.getHandler(), context.getClass()]) === true;

/** A route an account that must enrol a second factor may still use (the security page, logging out). */
export const AllowDuringEnrolment = () => SetMetadata(DURING_ENROLMENT_KEY, true);

/** Where an account that must enrol a second factor is sent (docs/dashboard.md, Second factors). */
export const ENROLMENT_PAGE = '/account/security';

/** Thrown when an account must enrol a second factor first: the dashboard filter redirects to the security page. */
export class EnrolmentRequired extends Error {
  constructor() {
    super('second factor enrolment required');
  }
}

/** Thrown when a sensitive action needs a recent proof (docs/security.md, Sudo mode): the filter sends to the confirm page. */
export class SudoRequired extends Error {
  constructor(readonly returnTo: string) {
    super('re-authentication required');
  }
}

/** The confirm-access page (docs/security.md, Sudo mode). */
export const SUDO_PAGE = '/account/sudo';

/** Thrown when a dashboard route needs a session: the dashboard filter turns it into a redirect to /login. */
export class LoginRequired extends Error {
  constructor() {
    super('login required');
  }
}

/** Audit actor of a dashboard request: the logged-in user, or the name typed into the login form. */
export const dashboardActor = (req: Request, name: string | null) => visitorActor(name, req.ip ?? null);

/** Every dashboard route but /login needs a logged-in user; the user becomes the audit actor. */
@Injectable()
export class SessionGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<RequestWithActor>();
    if (req.user) {
      req.actor = dashboardActor(req, staffActorName(req.user.username));
      const allowed = this.reflector.getAllAndOverride<boolean>(DURING_ENROLMENT_KEY, [context.getHandler(), context.getClass()]);
      if (req.session?.enrolmentRequired && !allowed) throw new EnrolmentRequired();
      return true;
    }
    if (isAnonymousRoute(this.reflector, context)) return true;
    throw new LoginRequired();
  }
}
