import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { PlacedSessionStore } from '../common/http/session-stores';
import { REDIS_CLIENT } from '../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * Where dashboard sessions live: the `session` table (created by the migrations), or Redis
 * when REDIS_URL is set so several instances share them. Never process memory.
 */
@Injectable()
export class DashboardSessionStore extends PlacedSessionStore {
  constructor(@Inject(APP_CONFIG) config: AppConfig, @Inject(REDIS_CLIENT) redis: Redis | null) {
    super(config, redis, { table: 'session', redisPrefix: 'sess:' }, 'Sessions');
  }
}
