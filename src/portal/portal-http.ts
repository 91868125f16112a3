import {
  applyDecorators,
  ArgumentsHost,
  CallHandler,
  CanActivate,
  Catch,
  Controller,
  ExceptionFilter,
  ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  Logger,
  NestInterceptor,
  SetMetadata,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExcludeController } from '@nestjs/swagger';
import { csrfSync } from 'csrf-sync';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import type { Actor, RequestWithActor } from '../common/auth/actor';
import { logUnexpected, toErrorResponse } from '../common/errors/api-exception.filter';
import { AppError } from '../common/errors/app-error';
import { APP_CONFIG, type AppConfig, portalConfig } from '../config/app-config';
import { LoginFormTokens } from '../dashboard/auth/login-form-token';

/** A portal session lasts 8 hours from sign-in, however active (docs/portal.md, Sessions). */
export const PORTAL_SESSION_MAX_AGE_MS = 8 * 60 * 60 * 1000;
export const PORTAL_LAYOUT = 'layouts/portal';
export const PORTAL_CSRF_FIELD = '_csrf';
export const PORTAL_FORM_REFUSED_MESSAGE = 'This form has expired or did not come from this site. Go back, reload the page and try again.';

const ANONYMOUS_KEY = 'portal:anonymous';
/** A portal route reachable without signing in (the sign-in pages). */
export const PortalAnonymous = () => SetMetadata(ANONYMOUS_KEY, true);

/** The anonymous sign-in forms' CSRF tokens: a signed double-submit cookie of their own, scoped to /portal. */
export class PortalFormTokens extends LoginFormTokens {}
export const portalFormTokensProvider = {
  provide: PortalFormTokens,
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) =>
    new PortalFormTokens(config, Date.now, { cookie: 'portal_form', path: '/portal', purpose: 'portal-form-token/v1' }),
};

/** Thrown when a portal page needs a signed-in customer: the filter turns it into a redirect to the sign-in page. */
export class PortalSignInRequired extends Error {
  constructor() {
    super('portal sign-in required');
  }
}

/** The audit actor of a customer's own action (docs/portal.md, Releasing a machine). */
export const customerActor = (req: { ip?: string }, email: string): Actor => ({ type: 'customer', name: email, ip: req.ip ?? null });

/** The signed-in customer's address, or undefined (no portal session, or one older than 8 hours). */
export function portalCustomer(req: Request): string | undefined {
  const portal = req.session?.portal;
  return portal && typeof portal.email === 'string' && Date.now() - portal.signedInAt < PORTAL_SESSION_MAX_AGE_MS
    ? portal.email
    : undefined;
}

const csrf = csrfSync({
  getTokenFromRequest: (req) => {
    const fromForm = (req.body as Record<string, unknown> | undefined)?.[PORTAL_CSRF_FIELD];
    return typeof fromForm === 'string' ? fromForm : undefined;
  },
});

/**
 * PORTAL_ENABLED=false answers 404; a page needs a signed-in customer (who becomes the audit actor) unless marked
 * anonymous; every POST carries a CSRF token: the session's once signed in, the sign-in cookie's before.
 */
@Injectable()
export class PortalGuard implements CanActivate {
  private readonly enabled: boolean;

  constructor(
    private readonly reflector: Reflector,
    private readonly forms: PortalFormTokens,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.enabled = portalConfig(config).enabled;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.enabled) throw AppError.notFound('Page');
    const req = context.switchToHttp().getRequest<RequestWithActor>();
    const anonymous = this.reflector.getAllAndOverride<boolean>(ANONYMOUS_KEY, [context.getHandler(), context.getClass()]) === true;
    const email = portalCustomer(req);
    if (email) req.actor = customerActor(req, email);
    else if (!anonymous) throw new PortalSignInRequired();
    if (['GET', 'HEAD', 'OPTIONS'].includes(req.method)) return true;
    const token = (req.body as Record<string, unknown> | undefined)?.[PORTAL_CSRF_FIELD];
    const valid = anonymous ? this.forms.verify(req, token) : csrf.isRequestValid(req);
    if (!valid) throw new ForbiddenException(PORTAL_FORM_REFUSED_MESSAGE);
    return true;
  }
}

/** What the portal's layout needs on every page: the customer, the CSRF token of their session, a pending message. */
export function portalLocals(req: Request): Record<string, unknown> {
  const email = portalCustomer(req);
  let flash: unknown;
  if (req.method === 'GET' && req.session?.portalFlash) {
    flash = req.session.portalFlash;
    delete req.session.portalFlash;
  }
  return { layout: PORTAL_LAYOUT, customerEmail: email, csrfToken: email ? csrf.generateToken(req) : undefined, flash };
}

export function setPortalFlash(req: Request, type: 'success' | 'error', message: string): void {
  if (req.session) req.session.portalFlash = { type, message };
}

/** Portal pages carry keys and personal data: never cached, always in the portal's layout. */
@Injectable()
export class PortalLocalsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    res.setHeader('Cache-Control', 'no-store');
    Object.assign(res.locals, portalLocals(req));
    return next.handle();
  }
}

const TITLES: Record<number, string> = {
  400: 'Invalid request',
  403: 'Form expired',
  404: 'Not found',
  409: 'Conflict',
  429: 'Too many requests',
  503: 'Service unavailable',
};

/** Any error of a portal request as a portal page; no session means the sign-in page. */
export function renderPortalError(exception: unknown, req: Request, res: Response, logger: Logger): void {
  if (res.headersSent) return;
  if (exception instanceof PortalSignInRequired)
    return res.redirect(req.method === 'GET' || req.method === 'HEAD' ? 302 : 303, '/portal/login');
  const { status, body, unexpected } = toErrorResponse(exception);
  if (unexpected) logUnexpected(logger, exception, req);
  let locals: Record<string, unknown> = { layout: PORTAL_LAYOUT };
  try {
    locals = portalLocals(req);
  } catch {
    // The session itself may be what failed.
  }
  const title = TITLES[status] ?? 'Something went wrong';
  const message = status >= 500 && status !== 503 ? 'Something went wrong on our side. Please try again later.' : body.error.message;
  res.status(status).setHeader('Cache-Control', 'no-store');
  res.render('portal/error', { ...locals, status, title, message }, (err, html) =>
    err ? res.type('text/plain').send(`${status} ${title}`) : res.send(html),
  );
}

@Catch()
@Injectable()
export class PortalExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Portal');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    renderPortalError(exception, ctx.getRequest<Request>(), ctx.getResponse<Response>(), this.logger);
  }
}

/** A portal controller: under /portal, guarded, errors as portal pages, kept out of the API docs. */
export function PortalController(prefix = ''): ClassDecorator {
  return applyDecorators(
    Controller(prefix ? `portal/${prefix}` : 'portal'),
    ApiExcludeController(),
    UseFilters(PortalExceptionFilter),
    UseGuards(PortalGuard),
    UseInterceptors(PortalLocalsInterceptor),
  );
}
