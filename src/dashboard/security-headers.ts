import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';

/**
 * helmet's options: the CSP allows only same-origin scripts, styles, images and form targets; inline styles stay
 * allowed because Swagger UI at /api/docs uses a <style> block (the dashboard itself uses none). No
 * upgrade-insecure-requests: a plain-HTTP internal deployment must still load its own stylesheet.
 */
const HELMET_OPTIONS: Parameters<typeof helmet>[0] = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      connectSrc: ["'self'"],
      fontSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      imgSrc: ["'self'", 'data:'],
      objectSrc: ["'none'"],
      scriptSrc: ["'self'"],
      scriptSrcAttr: ["'none'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
    },
  },
  referrerPolicy: { policy: 'same-origin' },
};

/**
 * The headers helmet sets with these options, found once by running it against a recording response: every one of
 * them is a constant (no directive depends on the request), so replaying the list sets exactly what helmet would,
 * without its dozen middleware calls per request. Its one removal, X-Powered-By, is never set (configureApp disables it).
 */
export function helmetHeaders(): readonly (readonly [string, string])[] {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let failure: unknown;
  helmet(HELMET_OPTIONS)({} as Request, recorder as unknown as Response, (err?: unknown) => (failure = err));
  if (failure) throw failure instanceof Error ? failure : new Error('helmet refused its options');
  return headers;
}

/** helmet's headers on every response (CSP, HSTS, nosniff, frame options, COOP/CORP, referrer policy, ...). */
export function securityHeaders(): RequestHandler {
  const headers = helmetHeaders();
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
