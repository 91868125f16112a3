import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

export const REDIS_CLIENT = Symbol('REDIS_CLIENT');

/** Complains about a Redis outage once per interval instead of once per request. */
const LOG_EVERY_MS = 10_000;

/**
 * One shared ioredis connection when REDIS_URL is set (null otherwise). Commands fail fast
 * while Redis is unreachable (no offline queue), so callers can fail open instead of hanging.
 */
export function createRedisClient(url: string, keyPrefix = '', logger = new Logger('Redis')): Redis {
  let lastLogged = 0;
  const client = new Redis(url, {
    keyPrefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 1000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  client.on('error', (err: Error) => {
    if (Date.now() - lastLogged < LOG_EVERY_MS) return;
    lastLogged = Date.now();
    logger.error(`Redis unreachable (${err.message}); rate limits fail open and dashboard sessions are unavailable until it returns`);
  });
  client.on('ready', () => {
    if (lastLogged) logger.warn('Redis connection restored');
    lastLogged = 0;
  });
  return client;
}

// Global: the one connection is infrastructure for rate limits, sessions and health alike (docs/architecture.md, Module boundaries).
@Global()
@Module({
  providers: [
    {
      provide: REDIS_CLIENT,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => (config.redisUrl ? createRedisClient(config.redisUrl, config.redisKeyPrefix ?? 'licence:') : null),
    },
  ],
  exports: [REDIS_CLIENT],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CLIENT) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit().catch(() => this.redis?.disconnect());
  }
}
