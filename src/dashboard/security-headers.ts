import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * helmet for every response. The CSP allows only same-origin scripts, styles, images and form
 * targets; inline styles stay allowed because Swagger UI at /api/docs uses a <style> block
 * (the dashboard itself uses none). No upgrade-insecure-requests: a plain-HTTP internal
 * deployment must still load its own stylesheet.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
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
  });
}
