import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import connectPgSimple from 'connect-pg-simple';
import type { RequestHandler } from 'express';
import session from 'express-session';
import type Redis from 'ioredis';
import { Pool } from 'pg';
import type { AppConfig } from '../../config/app-config';
import { RedisSessionStore } from './redis-session-store';

/** Where one kind of session lives: its PostgreSQL table (made by a migration), or its key prefix in Redis. */
export interface SessionPlace {
  table: string;
  redisPrefix: string;
}

/**
 * A session store in PostgreSQL, or in Redis when REDIS_URL is set so several instances share it; never process
 * memory. Staff and portal sessions each have their own place (docs/portal.md, Sessions).
 */
export function createSessionStore(
  config: Pick<AppConfig, 'databaseUrl'>,
  redis: Redis | null,
  place: SessionPlace,
  logger: Logger,
): { store: session.Store; close: () => Promise<void> } {
  const warn = (err: unknown) => logger.warn(`session store: ${(err as Error)?.message ?? String(err)}`);
  // The app's shared client: it carries REDIS_KEY_PREFIX, and RedisModule closes it at shutdown.
  if (redis) return { store: new RedisSessionStore(redis, place.redisPrefix), close: () => Promise.resolve() };
  const pool = new Pool({ connectionString: config.databaseUrl, max: 4, connectionTimeoutMillis: 3000, idleTimeoutMillis: 10_000 });
  // An idle connection cut by the server must not crash the process; the next query reconnects.
  pool.on('error', warn);
  const PgStore = connectPgSimple(session);
  const store = new PgStore({ pool, tableName: place.table, createTableIfMissing: false, errorLog: warn });
  return {
    store,
    close: async () => {
      store.close();
      await pool.end();
    },
  };
}

/** A session store in its place, closed with the app: the dashboard's and the portal's providers extend it. */
export abstract class PlacedSessionStore implements OnApplicationShutdown {
  readonly store: session.Store;
  private readonly close: () => Promise<void>;

  protected constructor(config: Pick<AppConfig, 'databaseUrl'>, redis: Redis | null, place: SessionPlace, loggerName: string) {
    ({ store: this.store, close: this.close } = createSessionStore(config, redis, place, new Logger(loggerName)));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}

/**
 * express-session sends a redirect's headers before its store write finishes, so a fast browser can follow the
 * redirect and read the old session (a lost flash message). This saves first, then redirects.
 */
export const saveSessionBeforeRedirect: RequestHandler = (req, res, next) => {
  const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
  res.redirect = (...args: unknown[]) => {
    // An empty session (e.g. just after logout) is not worth storing.
    if (!req.session || Object.keys(req.session).every((k) => k === 'cookie')) return redirect(...args);
    req.session.save(() => redirect(...args));
  };
  next();
};
