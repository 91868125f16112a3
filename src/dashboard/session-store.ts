import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import connectPgSimple from 'connect-pg-simple';
import { RedisStore } from 'connect-redis';
import session from 'express-session';
import { Pool } from 'pg';
import { createClient } from 'redis';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * Where dashboard sessions live: the `session` table (created by the migrations), or Redis
 * when REDIS_URL is set so several instances share them. Never process memory.
 */
@Injectable()
export class DashboardSessionStore implements OnApplicationShutdown {
  readonly store: session.Store;
  private readonly close: () => Promise<void>;
  private readonly logger = new Logger('Sessions');

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const warn = (err: unknown) => this.logger.warn(`session store: ${(err as Error)?.message ?? String(err)}`);
    if (config.redisUrl) {
      // Fail fast while Redis is down (a 503 page) instead of queueing requests until it returns.
      const client = createClient({ url: config.redisUrl, disableOfflineQueue: true });
      client.on('error', warn);
      client.connect().catch(warn);
      this.store = new RedisStore({ client, prefix: `${config.redisKeyPrefix ?? 'licence:'}sess:` });
      this.close = async () => {
        // A client still reconnecting has nothing to flush: drop it, or its retry timer keeps the process alive.
        if (client.isReady) await client.close().catch(() => client.destroy());
        else if (client.isOpen) client.destroy();
      };
    } else {
      const pool = new Pool({ connectionString: config.databaseUrl, max: 4, connectionTimeoutMillis: 3000, idleTimeoutMillis: 10_000 });
      // An idle connection cut by the server must not crash the process; the next query reconnects.
      pool.on('error', warn);
      const PgStore = connectPgSimple(session);
      const store = new PgStore({ pool, tableName: 'session', createTableIfMissing: false, errorLog: warn });
      this.store = store;
      this.close = async () => {
        await store.close();
        await pool.end();
      };
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
