import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { Params, PinoLogger } from 'nestjs-pino';
import { Options as HttpLogOptions, pinoHttp } from 'pino-http';
import type { AppConfig } from '../../config/app-config';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
// Licence keys look like PREFIX-XXXXX-XXXXX-XXXXX-XXXXX; they may appear in dashboard query strings.
const LICENSE_KEY = /\b[A-Z0-9]{2,8}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}\b/gi;

export const maskSecrets = (text: string) => text.replace(LICENSE_KEY, (k) => `${k.slice(0, k.indexOf('-') + 1)}*****`);

/** One structured line per request: id, method, path, status, duration, client IP; secrets masked. */
function requestLogOptions(config: AppConfig): HttpLogOptions {
  return {
    level: config.logLevel,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    serializers: {
      req: (req: { id: string; method: string; url: string; remoteAddress?: string; raw?: { ip?: string } }) => ({
        id: req.id,
        method: req.method,
        url: maskSecrets(req.url),
        ip: req.raw?.ip ?? req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.cookie', 'req.headers.authorization', 'res.headers["set-cookie"]'], censor: '***' },
    customSuccessMessage: (req, res, ms) => `${req.method} ${maskSecrets(req.url ?? '')} ${res.statusCode} ${Math.round(ms)}ms`,
    customErrorMessage: (req, res) => `${req.method} ${maskSecrets(req.url ?? '')} ${res.statusCode}`,
  };
}

/**
 * nestjs-pino for the application's own logs, without its per-request middleware (`forRoutes: []`): that one
 * runs every request inside an AsyncLocalStorage context, which on Node 20 hooks every promise and cost about
 * 100 µs of CPU per request, and nothing reads that context (error logs name the request id themselves).
 */
export function loggerParams(config: AppConfig): Params {
  return { pinoHttp: requestLogOptions(config), forRoutes: [] };
}

/** The request log line, mounted first by configureApp, on the logger nestjs-pino created (one destination). */
export function requestLogger(config: AppConfig): RequestHandler {
  return pinoHttp({ ...requestLogOptions(config), logger: PinoLogger.root }) as unknown as RequestHandler;
}
