import { ArgumentsHost, Catch, ExceptionFilter, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { logUnexpected, toErrorResponse } from '../../common/errors/api-exception.filter';
import { LoginFormTokens } from '../../html/login-form-token';
import { ENROLMENT_PAGE, EnrolmentRequired, LoginRequired, SUDO_PAGE, SudoRequired } from './session.guard';
import { viewLocals } from './view-locals';

const TITLES: Record<number, string> = {
  400: 'Invalid request',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Request too large',
  429: 'Too many requests',
  500: 'Something went wrong',
  503: 'Service unavailable',
};

export const LOGIN_THROTTLED_MESSAGE = 'Too many login attempts from your address. Wait a minute and try again.';
export const LOGIN_FORM_REFUSED_MESSAGE = 'The login form has expired or did not come from this site. Please try again.';

/**
 * Renders any error of a dashboard request as an HTML page (the JSON API keeps its own filter): no session means a
 * redirect to /login; a throttled login, or one refused for its CSRF token, re-renders the login form with a fresh token.
 */
export function renderDashboardError(exception: unknown, req: Request, res: Response, logger: Logger, loginForm?: LoginFormTokens): void {
  if (res.headersSent) return;
  if (exception instanceof LoginRequired) return res.redirect(req.method === 'GET' || req.method === 'HEAD' ? 302 : 303, '/login');
  if (exception instanceof EnrolmentRequired)
    return res.redirect(req.method === 'GET' || req.method === 'HEAD' ? 302 : 303, ENROLMENT_PAGE);
  if (exception instanceof SudoRequired)
    return res.redirect(
      req.method === 'GET' || req.method === 'HEAD' ? 302 : 303,
      `${SUDO_PAGE}?${new URLSearchParams({ return_to: exception.returnTo }).toString()}`,
    );
  const { status, body, unexpected } = toErrorResponse(exception);
  if (unexpected) logUnexpected(logger, exception, req);
  const locals = { ...safeViewLocals(req), status, title: TITLES[status] ?? 'Error' };
  res.status(status).setHeader('Cache-Control', 'no-store');
  if ((status === 429 || status === 403) && req.path === '/login' && !req.user && loginForm) {
    const error = status === 429 ? LOGIN_THROTTLED_MESSAGE : LOGIN_FORM_REFUSED_MESSAGE;
    return res.render('login', { ...locals, title: 'Log in', error, csrfToken: loginForm.formToken(req, res) });
  }
  const message = status >= 500 && status !== 503 ? `The error was logged with request id ${loggedRequestId(req)}.` : body.error.message;
  res.render('error', { ...locals, message }, (err, html) =>
    err ? res.type('text/plain').send(`${status} ${locals.title}`) : res.send(html),
  );
}

/** The session itself may be what failed (store down): render without its locals then. */
function safeViewLocals(req: Request): Record<string, unknown> {
  try {
    return viewLocals(req);
  } catch {
    return {};
  }
}

@Catch()
@Injectable()
export class DashboardExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Dashboard');

  constructor(private readonly loginForm: LoginFormTokens) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    renderDashboardError(exception, ctx.getRequest<Request>(), ctx.getResponse<Response>(), this.logger, this.loginForm);
  }
}

/** The id the request log line carries (set by the request logger), or '-' before it ran. */
function loggedRequestId(req: Request): string {
  const id = (req as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : '-';
}
