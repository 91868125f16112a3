import { Inject, Injectable, Logger, ServiceUnavailableException } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import session from 'express-session';
import type Redis from 'ioredis';
import { createHmac } from 'node:crypto';
import { toError } from '../common/errors/to-error';
import { PlacedSessionStore, saveSessionBeforeRedirect } from '../common/http/session-stores';
import { REDIS_CLIENT } from '../common/redis/redis.module';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { PORTAL_SESSION_MAX_AGE_MS, renderPortalError } from './portal-http';

export const PORTAL_COOKIE = 'portal_session';
export const PORTAL_PREFIX = '/portal';

export const isPortalPath = (path: string): boolean => path === PORTAL_PREFIX || path.startsWith(`${PORTAL_PREFIX}/`);

declare module 'express-session' {
  interface SessionData {
    /** The signed-in customer: their address (lower-cased) and when the link was used. */
    portal?: { email: string; signedInAt: number };
    /** A one-time message for the next portal page (post/redirect/get). */
    portalFlash?: { type: 'success' | 'error'; message: string };
  }
}

/** Portal sessions: their own table, or their own Redis prefix, never the staff sessions' (docs/portal.md, Sessions). */
@Injectable()
export class PortalSessionStore extends PlacedSessionStore {
  constructor(@Inject(APP_CONFIG) config: AppConfig, @Inject(REDIS_CLIENT) redis: Redis | null) {
    super(config, redis, { table: 'portal_session', redisPrefix: 'portal-sess:' }, 'PortalSessions');
  }
}

/**
 * The portal's session on /portal paths only, called by configureApp: cookie `portal_session`, scoped to /portal and
 * signed with a key of its own (derived from SESSION_SECRET), so a staff cookie never opens it and it never reaches
 * a staff page. The staff session is never read on these paths.
 */
export function configurePortal(app: NestExpressApplication, config: AppConfig): void {
  const sessions = session({
    name: PORTAL_COOKIE,
    secret: createHmac('sha256', config.sessionSecret).update('portal-session/v1').digest('base64url'),
    store: app.get(PortalSessionStore).store,
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax', secure: 'auto', maxAge: PORTAL_SESSION_MAX_AGE_MS, path: PORTAL_PREFIX },
  });
  const logger = new Logger('Portal');
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!isPortalPath(req.path)) return next();
    sessions(req, res, (err?: unknown) => {
      if (err) {
        logger.warn(`portal session store unavailable: ${toError(err).message}`);
        return next(new ServiceUnavailableException('Sessions cannot be read right now; try again shortly.'));
      }
      saveSessionBeforeRedirect(req, res, next);
    });
  });
  // Failures before Nest's router (the session store down) as a portal page, never Express's default one.
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) =>
    isPortalPath(req.path) ? renderPortalError(err, req, res, logger) : next(err),
  );
}
