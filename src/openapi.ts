import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import express, { type Express } from 'express';
import { DocumentBuilder, OpenAPIObject, OperationObject, ResponseObject, SwaggerModule } from '@nestjs/swagger';
import { API_KEY_SCHEME, BEARER_SCHEME } from './common/auth/admin-route.decorator';
import { ErrorResponseDto } from './common/errors/error-response.dto';
import metadata from './metadata';
import { METRICS_TOKEN_SCHEME } from './metrics/metrics.guard';

const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponseDto' } } };

/** Answered by the body parser before any route runs, so every operation with a body can get them. */
const BODY_RESPONSES: Record<string, ResponseObject> = {
  '413': { description: 'PAYLOAD_TOO_LARGE: the JSON body is over 64 KiB', content: ERROR_CONTENT },
  '415': {
    description: 'UNSUPPORTED_MEDIA_TYPE: the body is not JSON, or its charset or encoding is not supported',
    content: ERROR_CONTENT,
  },
};

const TAGS: [string, string][] = [
  ['client', 'Client API: no authentication, rate-limited per IP; unknown body fields are ignored'],
  ['admin: products', 'Products (admin API key)'],
  ['admin: licenses', 'Licences and their seats (admin API key)'],
  ['admin: audit', 'The audit log (admin API key)'],
  ['admin: stats', 'Statistics per product (admin API key)'],
  ['admin: tokens', 'Scoped admin tokens (admin API key or a token with tokens:manage)'],
  ['admin: webhooks', 'Webhook endpoints, secrets and deliveries (admin API key or a token with webhooks:manage)'],
  ['admin: signing keys', 'The keyring: list, rotate, revoke signing keys (admin API key)'],
  ['admin: mail', 'Outgoing customer mail: the log and retries (admin API key)'],
  ['admin: stores', 'Store plans and the store event ledger (admin API key)'],
  ['admin: releases', 'Releases, their artifacts and download counts (admin API key)'],
  ['admin: staff', 'Staff accounts (admin API key)'],
  ['client: releases', 'Update checks, update feeds and signed download links for clients: no admin credential'],
  ['stores', "Purchase events from the stores, each verified by the store's own signature"],
  ['health', 'Readiness and liveness probes'],
  ['operations', 'Prometheus metrics'],
];

/** Nothing but the host of the API docs' routes. */
@Module({})
class OpenApiHostModule {}

/** Swagger UI and, beside it, the JSON document (`/api/docs-json`). */
export const API_DOCS_PATH = '/api/docs';

let pluginMetadataLoaded: Promise<void> | undefined;

/**
 * The OpenAPI document of the JSON API: the DTO decorators, the Swagger CLI plugin's committed metadata
 * (src/metadata.ts, `npm run openapi:metadata`) and what no decorator can say (public operations, body-parser errors).
 */
export async function createOpenApiDocument(app: INestApplication): Promise<OpenAPIObject> {
  pluginMetadataLoaded ??= SwaggerModule.loadPluginMetadata(metadata);
  await pluginMetadataLoaded;
  const builder = new DocumentBuilder()
    .setTitle('Licence server API')
    .setDescription(
      'Client API (activate, deactivate, validate; no authentication, rate-limited per IP) and admin API (header `X-API-Key` or ' +
        '`Authorization: Bearer`, with an API_KEY key or a scoped `lst_` token; a missing scope is 403 FORBIDDEN). ' +
        'Every error has the body `{"error": {"code", "message", "details?"}}`.',
    )
    .setVersion('1')
    .setLicense('MIT', 'https://opensource.org/licenses/MIT')
    .addServer('/', 'This server')
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Admin credential: an API_KEY key or a scoped token (lst_...)' },
      API_KEY_SCHEME,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'The same admin credential as X-API-Key, as Authorization: Bearer' },
      BEARER_SCHEME,
    )
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, for a Prometheus scraper' }, METRICS_TOKEN_SCHEME);
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ErrorResponseDto],
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation: OperationObject | undefined = item[method];
      if (!operation) continue;
      // No guard declared a scheme: the operation is public, which generators and linters want stated.
      operation.security ??= [];
      if (operation.requestBody) operation.responses = { ...operation.responses, ...BODY_RESPONSES };
    }
  }
  return document;
}

/**
 * Swagger UI at /api/docs and the JSON document at /api/docs-json, served by an Express app of their own
 * (a Nest application on its own ExpressAdapter, public APIs only) that the caller mounts where the JSON API's
 * requests never walk its ten routes (docs/performance.md, Framework seams).
 */
export async function setupOpenApi(app: INestApplication): Promise<Express> {
  const document = await createOpenApiDocument(app);
  const docs = express();
  // The main app's settings (app.setup.ts), which a mounted app does not inherit.
  docs.disable('x-powered-by');
  docs.set('etag', false);
  const host = await NestFactory.create(OpenApiHostModule, new ExpressAdapter(docs), { logger: false });
  SwaggerModule.setup('api/docs', host, document, { jsonDocumentUrl: 'api/docs-json', customSiteTitle: 'Licence server API' });
  return docs;
}
