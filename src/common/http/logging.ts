import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../../config/app-config';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
// Licence keys look like PREFIX-XXXXX-XXXXX-XXXXX-XXXXX; they may appear in dashboard query strings.
const LICENSE_KEY = /\b[A-Z0-9]{2,8}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}\b/gi;

export const maskSecrets = (text: string) => text.replace(LICENSE_KEY, (k) => `${k.slice(0, k.indexOf('-') + 1)}*****`);

/** One structured line per request: id, method, path, status, duration, client IP; secrets masked. */
export function loggerParams(config: AppConfig): Params {
  return {
    pinoHttp: {
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
    },
  };
}
