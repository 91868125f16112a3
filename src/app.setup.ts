import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import { join } from 'node:path';
import { API_KEY_SCHEME, BEARER_SCHEME } from './auth/admin-route.decorator';
import { ApiExceptionFilter, toErrorResponse } from './common/errors/api-exception.filter';
import { ErrorResponseDto } from './common/errors/error-response.dto';
import { hardenHttpServer, noStore, refuseDeclaredOversize, requireHostHeader } from './common/http/http-hardening';
import { requestLogger } from './common/http/logging';
import { projectRoot } from './common/paths';
import { AppConfig } from './config/app-config';
import { configureDashboard } from './dashboard/dashboard.setup';
import { securityHeaders } from './dashboard/security-headers';

export const BODY_LIMIT = '64kb';
const BODY_LIMIT_BYTES = 64 * 1024;

/** Express `trust proxy` from TRUST_PROXY: booleans and hop counts as such, anything else as given. */
export function trustProxyValue(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/**
 * Everything about the HTTP app that is not a module: used by main.ts AND by the tests,
 * so the tests exercise exactly what production runs.
 */
export function configureApp(nestApp: INestApplication, config: AppConfig): NestExpressApplication {
  const app = nestApp as NestExpressApplication;
  app.useLogger(app.get(Logger));
  app.set('trust proxy', trustProxyValue(config.trustProxy));
  app.disable('x-powered-by');
  app.set('etag', false);
  // First, so every response (body-parser errors included) gets its request id and log line.
  app.use(requestLogger());
  app.use(securityHeaders());
  hardenHttpServer(app.getHttpServer());

  app.use('/api/v1', noStore);
  app.use(requireHostHeader, refuseDeclaredOversize(BODY_LIMIT_BYTES));
  app.use(express.json({ limit: BODY_LIMIT, strict: true }));
  app.use(express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 200 }));
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
  configureDashboard(app, config, root);

  setupSwagger(app);
  return app;
}

function setupSwagger(app: NestExpressApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Licence server API')
      .setDescription(
        'Client API (activate, deactivate, validate; no authentication, rate-limited per IP) and admin API (header `X-API-Key` or ' +
          '`Authorization: Bearer`, with an API_KEY key or a scoped `lst_` token; a missing scope is 403 FORBIDDEN). ' +
          'Every error has the body `{"error": {"code", "message", "details?"}}`.',
      )
      .setVersion('1')
      .addApiKey(
        { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Admin API key or scoped token (lst_...)' },
        API_KEY_SCHEME,
      )
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The same credential as X-API-Key' }, BEARER_SCHEME)
      .build(),
    { extraModels: [ErrorResponseDto] },
  );
  SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json', customSiteTitle: 'Licence server API' });
}
