import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS_CLIENT } from '../common/redis/redis.module';
import { runStatement, sql } from '../database/statement';

const PING_TIMEOUT_MS = 2000;

export interface HealthReport {
  /** ok: all up; degraded: Redis down (the server still serves, rate limits fail open); error: database down. */
  status: 'ok' | 'degraded' | 'error';
  database: 'up' | 'down';
  /** Present only when REDIS_URL is set. */
  redis?: 'up' | 'down';
}

@Injectable()
export class HealthService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS_CLIENT) private readonly redis: Redis | null,
  ) {}

  async check(): Promise<HealthReport> {
    const [databaseUp, redisUp] = await Promise.all([
      withTimeout(runStatement(this.dataSource.manager, 'health-ping', sql`SELECT 1`)),
      this.redis ? withTimeout(this.redis.ping()) : Promise.resolve(undefined),
    ]);
    const report: HealthReport = {
      status: !databaseUp ? 'error' : redisUp === false ? 'degraded' : 'ok',
      database: databaseUp ? 'up' : 'down',
    };
    if (redisUp !== undefined) report.redis = redisUp ? 'up' : 'down';
    return report;
  }
}

async function withTimeout(probe: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)));
  try {
    return await Promise.race([
      probe.then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
