import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import connectPgSimple from 'connect-pg-simple';
import session from 'express-session';
import { Pool } from 'pg';
import type Redis from 'ioredis';
import { REDIS_CLIENT } from '../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { RedisSessionStore } from './redis-session-store';

/**
 * Where dashboard sessions live: the `session` table (created by the migrations), or Redis
 * when REDIS_URL is set so several instances share them. Never process memory.
 */
@Injectable()
export class DashboardSessionStore implements OnApplicationShutdown {
  readonly store: session.Store;
  private readonly close: () => Promise<void>;
  private readonly logger = new Logger('Sessions');

  constructor(@Inject(APP_CONFIG) config: AppConfig, @Inject(REDIS_CLIENT) redis: Redis | null) {
    const warn = (err: unknown) => this.logger.warn(`session store: ${(err as Error)?.message ?? String(err)}`);
    if (redis) {
      // The app's shared client: it carries REDIS_KEY_PREFIX, and RedisModule closes it at shutdown.
      this.store = new RedisSessionStore(redis, 'sess:');
      this.close = () => Promise.resolve();
    } else {
      const pool = new Pool({ connectionString: config.databaseUrl, max: 4, connectionTimeoutMillis: 3000, idleTimeoutMillis: 10_000 });
      // An idle connection cut by the server must not crash the process; the next query reconnects.
      pool.on('error', warn);
      const PgStore = connectPgSimple(session);
      const store = new PgStore({ pool, tableName: 'session', createTableIfMissing: false, errorLog: warn });
      this.store = store;
      this.close = async () => {
        store.close();
        await pool.end();
      };
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
