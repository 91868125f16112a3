import { Logger, ServiceUnavailableException } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import session from 'express-session';
import { dirname, join } from 'node:path';
import { toError } from '../common/errors/to-error';
import { isApiPath } from '../common/http/http-hardening';
import { chain } from '../common/http/middleware-chain';
import { saveSessionBeforeRedirect } from '../common/http/session-stores';
import type { AppConfig } from '../config/app-config';
import { SESSION_MAX_AGE_MS } from '../staff/sign-in/signed-in-sessions';
import { DashboardPassport } from './auth/dashboard-passport';
import { LoginFormTokens } from '../html/login-form-token';
import { renderDashboardError } from './http/dashboard-exception.filter';
import { DashboardSessionStore } from './session-store';
import { createViewEngine } from './views/view-engine';

export const SESSION_COOKIE = 'licence_session';
export const ASSETS_PREFIX = '/assets/';
/** The files of uPlot served under /assets/vendor/ (name there, file in the package's dist/). */
const CHART_LIBRARY_FILES = [
  ['uplot.js', 'uPlot.iife.min.js'],
  ['uplot.css', 'uPlot.min.css'],
] as const;

// Sessions exist only where the dashboard lives: the JSON API and static files never touch the session store.
const DASHBOARD_ROOTS = [
  '/login',
  '/logout',
  '/dashboard',
  '/licenses',
  '/audit',
  '/signing-keys',
  '/tokens',
  '/offline-activation',
  '/webhooks',
  '/emails',
  '/stores',
  '/products',
  '/account',
  '/staff',
];

export function isDashboardPath(path: string): boolean {
  return path === '/' || DASHBOARD_ROOTS.some((root) => path === root || path.startsWith(`${root}/`));
}

const onDashboardPaths =
  (handler: RequestHandler): RequestHandler =>
  (req, res, next) =>
    isDashboardPath(req.path) ? handler(req, res, next) : next();

/**
 * The dashboard's HTTP plumbing, called by configureApp (main.ts and tests alike): Handlebars with
 * the layout, the stylesheet under /assets/, and sessions + passport on dashboard paths only.
 * Returns the router that only paths outside the JSON API reach (configureApp adds the API docs to it).
 */
export function configureDashboard(app: NestExpressApplication, config: AppConfig, root: string): Router {
  app.engine('hbs', createViewEngine(join(root, 'views')).__express);
  app.set('view options', { layout: 'layouts/main' });

  const sessions = session({
    name: SESSION_COOKIE,
    secret: config.sessionSecret,
    store: app.get(DashboardSessionStore).store,
    resave: false,
    saveUninitialized: false,
    // Secure whenever the request came over HTTPS (directly or, with TRUST_PROXY, via the proxy).
    cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', maxAge: SESSION_MAX_AGE_MS, path: '/' },
  });
  const logger = new Logger('Dashboard');
  const { passport } = app.get(DashboardPassport);
  // The stylesheet and the dashboard's session plumbing in one router that the JSON API's paths skip with one path
  // test (they never need either): every layer Express walks costs on every request of the client API.
  const dashboard = express.Router();
  dashboard.use(ASSETS_PREFIX, express.static(join(root, 'public'), { index: false, maxAge: '1h', dotfiles: 'ignore' }));
  // The charting library from our own origin, never a CDN, so the CSP stays 'self' (docs/dashboard.md, Charts).
  // The same for @simplewebauthn/browser's bundle (docs/dashboard.md, Passkeys); its package exports no subpath, so
  // the file is found beside its CommonJS entry.
  const webauthnBundle = join(dirname(require.resolve('@simplewebauthn/browser')), '..', 'dist', 'bundle', 'index.umd.min.js');
  for (const [name, path] of [
    ...CHART_LIBRARY_FILES.map(([served, file]) => [served, require.resolve(`uplot/dist/${file}`)] as const),
    ['simplewebauthn-browser.js', webauthnBundle] as const,
  ]) {
    dashboard.get(`${ASSETS_PREFIX}vendor/${name}`, (_req, res, next) => res.sendFile(path, { maxAge: '1h' }, (err) => err && next(err)));
  }
  dashboard.use(
    onDashboardPaths(
      chain(
        // The store (PostgreSQL or Redis) being unreachable is an outage, not a bug: a 503 page.
        (req, res, next) =>
          sessions(req, res, (err?: unknown) => {
            if (err) logger.warn(`session store unavailable: ${toError(err).message}`);
            next(err ? new ServiceUnavailableException('Sessions cannot be read right now; try again shortly.') : undefined);
          }),
        saveSessionBeforeRedirect,
        passport.initialize(),
        passport.session(),
      ),
    ),
  );
  app.use((req: Request, res: Response, next: NextFunction) => (isApiPath(req.path) ? next() : dashboard(req, res, next)));

  // Failures before Nest's router (session store down, a session that cannot be read) as an HTML page.
  const loginForm = app.get(LoginFormTokens);
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) =>
    isDashboardPath(req.path) ? renderDashboardError(err, req, res, logger, loginForm) : next(err),
  );
  return dashboard;
}
