import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import express, { NextFunction, Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import { join } from 'node:path';
import { ApiExceptionFilter, toErrorResponse } from './common/errors/api-exception.filter';
import {
  hardenHttpServer,
  noStore,
  onApiPaths,
  refuseDeclaredOversize,
  requireHostHeader,
  requireJsonBody,
} from './common/http/http-hardening';
import { installJsonReply } from './common/http/json-reply';
import { requestLogger } from './common/http/logging';
import { chain } from './common/http/middleware-chain';
import { rawBodyParsers, routeTable } from './common/http/raw-body';
import { projectRoot } from './common/paths';
import { AppConfig } from './config/app-config';
import { ConfigError } from './config/config.error';
import { TRUST_EVERYONE_MESSAGE, trustsEveryone } from './config/env.schema';
import { configureDashboard, isDashboardPath } from './dashboard/dashboard.setup';
import { securityHeaders } from './dashboard/security-headers';
import { requestMetrics } from './metrics/metrics.middleware';
import { MetricsService } from './metrics/metrics.service';
import { configurePortal, isPortalPath } from './portal/portal.setup';
import { API_DOCS_PATH, setupOpenApi } from './openapi';

export const BODY_LIMIT = '64kb';
const BODY_LIMIT_BYTES = 64 * 1024;

/** A request that declares a body (a length above 0, or chunks). */
const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** Express `trust proxy` from TRUST_PROXY: hop counts as numbers, addresses as given; never "everyone" (spoofable client IPs). */
export function trustProxyValue(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (trustsEveryone(value)) throw new ConfigError(TRUST_EVERYONE_MESSAGE);
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/**
 * Everything about the HTTP app that is not a module: used by main.ts AND by the tests,
 * so the tests exercise exactly what production runs.
 */
export async function configureApp(nestApp: INestApplication, config: AppConfig): Promise<NestExpressApplication> {
  const app = nestApp as NestExpressApplication;
  app.useLogger(app.get(Logger));
  app.set('trust proxy', trustProxyValue(config.trustProxy));
  app.disable('x-powered-by');
  app.set('etag', false);
  // Express's res.json for the plain answer without its per-call lookups (docs/performance.md, Framework seams).
  installJsonReply(app.getHttpAdapter().getInstance());
  hardenHttpServer(app.getHttpServer());

  // Everything before routing is ONE router layer (chain): Express walks its layers one by one on every request, and
  // the profile of the client routes showed that walk as the largest part of the framework's floor. Order as before:
  // the request id and log line first (so every response, body-parser errors included, gets them; the metrics
  // share its listener), then the headers, the cheap refusals, and the body parsers.
  // Forms only where the dashboard's and the portal's forms post (CSRF-checked there); the JSON API never parses them.
  // 256 fields: the licence list's bulk form names up to 200 rows plus the view's filters (docs/dashboard.md, Bulk actions).
  const forms = express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 256 });
  const parsedBody = chain(
    refuseDeclaredOversize(BODY_LIMIT_BYTES),
    onApiPaths(requireJsonBody),
    express.json({ limit: BODY_LIMIT, strict: true }),
    (req: Request, res: Response, next: NextFunction) =>
      isDashboardPath(req.path) || isPortalPath(req.path) ? forms(req, res, next) : next(),
  );
  // Routes declared with @RawBodyRoute get their bytes unparsed, under their own limit (docs/stores.md, Raw bodies).
  const raw = rawBodyParsers(app);
  // A body sent with a method or to a path that no route takes is not read: the router answers 404, not a size or
  // type refusal of a body nothing would have read (docs/admin-api.md, Conventions).
  const routes = routeTable(app);
  const bodyFor = (req: Request, res: Response, next: NextFunction) =>
    hasBody(req) && !routes.has(req.method, req.path) ? next() : parsedBody(req, res, next);
  app.use(
    chain(
      requestLogger(undefined, requestMetrics(app.get(MetricsService))),
      securityHeaders(),
      onApiPaths(noStore),
      requireHostHeader,
      (req: Request, res: Response, next: NextFunction) => (raw.parserFor(req.method, req.path) ?? bodyFor)(req, res, next),
    ),
  );
  // Body-parser failures (bad JSON, too large, bad charset) never reach Nest's filters: render them here.
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const { status, body } = toErrorResponse(err);
    res.status(status).json(body);
  });

  app.useGlobalFilters(new ApiExceptionFilter());

  const root = projectRoot();
  app.setBaseViewsDir(join(root, 'views'));
  app.setViewEngine('hbs');
  configurePortal(app, config);
  const nonApi = configureDashboard(app, config, root);

  // Swagger UI's routes and static files (ten layers) in front of every Nest route would be walked by every API
  // request: their own Express app joins the dashboard's router, which the JSON API's paths skip with one path test.
  const docs = await setupOpenApi(app);
  // Only the docs' own paths enter that app: a mounted app leaves its request and response prototypes behind.
  nonApi.use((req: Request, res: Response, next: NextFunction) => (req.path.startsWith(API_DOCS_PATH) ? docs(req, res, next) : next()));
  return app;
}
