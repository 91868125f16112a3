import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Params, PinoLogger } from 'nestjs-pino';
import type { DestinationStream, Logger } from 'pino';
import type { AppConfig } from '../../config/app-config';
import { humanReadableLog } from './log-format';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
// Licence keys look like PREFIX-XXXXX-XXXXX-XXXXX-XXXXX; they may appear in dashboard query strings.
const LICENSE_KEY = /\b[A-Z0-9]{2,8}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}\b/gi;

// Query parameters whose value is a credential or a one-time value by their name (api_key, token, _csrf, nonce, ...).
const SECRET_PARAM = /key|token|secret|passw|pwd|signature|nonce|csrf|auth|session|cookie/i;

const maskLicenseKeys = (text: string) => text.replace(LICENSE_KEY, (k) => `${k.slice(0, k.indexOf('-') + 1)}*****`);

/**
 * The server's own credentials by their prefix, whatever the parameter is called (docs/security.md, Review findings
 * (round 3)): API keys `lsk_` (config/secrets.ts), admin tokens `lst_` (auth/admin-token.ts), webhook secrets `whsec_`
 * (webhooks/webhooks.service.ts) and signatures `RSA-SHA256:` (signing/license-signature.ts); logging.spec.ts ties
 * each to its generator.
 */
const SECRET_VALUE = /(?:^|[^A-Za-z0-9])(?:lsk_|lst_|whsec_|RSA-SHA256:)/i;
const LICENSE_KEY_INSIDE = new RegExp(LICENSE_KEY.source, 'i');

const decoded = (raw: string) => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw; // A malformed escape: judge it as sent.
  }
};

/** A URL component that holds a credential, or a licence key only visible once decoded (`%50OS-...`), is not logged at all. */
const holdsSecret = (raw: string) => {
  const text = decoded(raw);
  return SECRET_VALUE.test(text) || (LICENSE_KEY_INSIDE.test(text) && !LICENSE_KEY_INSIDE.test(raw));
};

/** The query string with the values of secret-named parameters, and of secret-looking values, replaced by `[REDACTED]` (names kept, so the line still says what was sent). */
export function redactQuery(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const params = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      if (eq < 0) return holdsSecret(pair) ? '[REDACTED]' : pair;
      return SECRET_PARAM.test(decoded(rawName)) || holdsSecret(pair.slice(eq + 1)) ? `${rawName}=[REDACTED]` : pair;
    });
  return `${url.slice(0, start)}?${params.join('&')}`;
}

/** The path with every segment that holds a credential replaced by `[REDACTED]`. */
export function redactPath(url: string): string {
  const end = url.indexOf('?');
  const path = end < 0 ? url : url.slice(0, end);
  const redacted = path
    .split('/')
    .map((segment) => (holdsSecret(segment) ? '[REDACTED]' : segment))
    .join('/');
  return end < 0 ? redacted : redacted + url.slice(end);
}

/** What the request log may show of a URL: secrets redacted by parameter name and by value, licence keys masked anywhere. */
export const maskSecrets = (text: string) => maskLicenseKeys(redactQuery(redactPath(text)));

/** The client's X-Request-Id when it is a sane token (and no credential: it is logged and echoed), otherwise a new UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) && !holdsSecret(given) && !LICENSE_KEY_INSIDE.test(given)
    ? given
    : randomUUID();
}

export const logLevelOf = (status: number, finished: boolean): 'error' | 'warn' | 'info' =>
  status >= 500 ? 'error' : status >= 400 || !finished ? 'warn' : 'info';

/**
 * Where the logs go: one JSON object per line on stdout (what log collectors read), or, when stdout is a terminal,
 * one human-readable line per entry (a person reading `npm start`).
 */
export function logDestinationFor(stdout: Pick<NodeJS.WriteStream, 'isTTY' | 'write'> = process.stdout): DestinationStream | undefined {
  return stdout.isTTY ? humanReadableLog(stdout) : undefined; // undefined: pino's own fast stdout writer
}

/**
 * nestjs-pino for the application's own logs, without its per-request middleware (`forRoutes: []`): that one
 * runs every request inside an AsyncLocalStorage context, which on Node 20 hooks every promise and cost about
 * 100 µs of CPU per request, and nothing reads that context (error logs name the request id themselves).
 */
export function loggerParams(config: AppConfig, destination: DestinationStream | undefined = logDestinationFor()): Params {
  const options = { level: config.logLevel };
  return { pinoHttp: destination ? [options, destination] : options, forRoutes: [] };
}

/** Told the elapsed milliseconds of every finished response (the metrics take their request timings from it). */
export type ResponseObserver = (req: Request, res: Response, elapsedMs: number) => void;

/**
 * One structured line per request (id, method, path with licence keys masked, status, ms, client IP), mounted
 * first by configureApp on the logger nestjs-pino created (one destination). Hand-written rather than pino-http:
 * that one builds and serialises a child logger for every request even when the line is below LOG_LEVEL, which
 * the benchmark's profile showed as the most expensive middleware. Here nothing is built unless it is written.
 * `onFinished` shares the one `close` listener (each listener costs on every request).
 */
export function requestLogger(root: Logger = PinoLogger.root, onFinished?: ResponseObserver): RequestHandler {
  // Our req/res objects are already what the line should say: nestjs-pino's logger would put them through pino-http's
  // serializers, which expect Node's own objects (and so logged res.statusCode null and dropped the IP).
  const logger = root.child({}, { serializers: { req: asLogged, res: asLogged } });
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    const id = requestIdOf(req.headers['x-request-id']);
    (req as Request & { id: string }).id = id;
    res.setHeader('X-Request-Id', id);
    // `on`, not `once`: a response closes once, and `once` wraps the listener and removes it again on every request.
    res.on('close', () => {
      const finished = res.writableFinished;
      if (finished && onFinished) onFinished(req, res, performance.now() - started);
      const level = logLevelOf(res.statusCode, finished);
      if (!logger.isLevelEnabled(level)) return;
      const url = maskSecrets(req.originalUrl ?? req.url);
      const responseTime = Math.round(performance.now() - started);
      logger[level](
        { req: { id, method: req.method, url, ip: req.ip ?? req.socket.remoteAddress }, res: { statusCode: res.statusCode }, responseTime },
        finished ? `${req.method} ${url} ${res.statusCode} ${responseTime}ms` : `${req.method} ${url} aborted`,
      );
    });
    next();
  };
}

const asLogged = <T>(value: T): T => value;
