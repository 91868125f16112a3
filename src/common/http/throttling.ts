import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { applyDecorators, ExecutionContext, Inject, Injectable, Logger, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiTooManyRequestsResponse } from '@nestjs/swagger';
import {
  normalizeIp,
  ThrottlerGuard,
  ThrottlerModule,
  ThrottlerModuleOptions,
  ThrottlerRequest,
  ThrottlerStorage,
} from '@nestjs/throttler';
import type Redis from 'ioredis';
import { APP_CONFIG, AppConfig, DEFAULT_LOGIN_PAGE_RATE_LIMIT, DEFAULT_STORES_RATE_LIMIT } from '../../config/app-config';
import { REDIS_CLIENT } from '../redis/redis.module';
import { AppError } from '../errors/app-error';
import { ErrorCode } from '../errors/error-codes';
import { ErrorResponseDto } from '../errors/error-response.dto';

/** The named per-IP limits (docs/client-api.md, Rate limits): one bucket per name and client IP, so each client endpoint counts on its own. */
export type RateLimitName = keyof AppConfig['rateLimits'];
export const RATE_LIMIT_NAMES: readonly RateLimitName[] = [
  'activate',
  'deactivate',
  'validate',
  'heartbeat',
  'admin',
  'login',
  'loginPage',
  'stores',
];

/** The limits a config built in code may omit (every other one is required). */
const OPTIONAL_LIMIT_DEFAULTS: Partial<Record<RateLimitName, number>> = {
  loginPage: DEFAULT_LOGIN_PAGE_RATE_LIMIT,
  stores: DEFAULT_STORES_RATE_LIMIT,
};

/** Fixed 60-second window (docs/client-api.md, Rate limits). */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** Told about every request refused with 429; the metrics module provides it (common/ knows no feature). */
export interface RateLimitObserver {
  rateLimitRejected(throttler: string): void;
}
export const RATE_LIMIT_OBSERVER = Symbol('RATE_LIMIT_OBSERVER');

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

const RATE_LIMIT_KEY = 'licence-server:rate-limit';
const reflector = new Reflector();

/** The named limit a route opted into with @RateLimit, if any (method overrides class). */
export function routeRateLimit(context: ExecutionContext): RateLimitName | undefined {
  return reflector.getAllAndOverride<RateLimitName | undefined>(RATE_LIMIT_KEY, [context.getHandler(), context.getClass()]);
}

/**
 * In-memory fixed-window counters: a window starts with a key's first hit and resets after `ttl`.
 * (The throttler's own in-memory storage keeps per-hit expiries, i.e. a sliding window.)
 * One process only: with REDIS_URL, a Redis storage shares counters between instances.
 */
export class FixedWindowMemoryStorage implements ThrottlerStorage {
  private readonly windows = new Map<string, { hits: number; resetAt: number }>();
  private nextSweepAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  // blockDuration is not used: a fixed window blocks until it resets, whatever the block length.
  increment(key: string, ttl: number, limit: number, _blockDuration?: number, _throttlerName?: string): Promise<ThrottlerStorageRecord> {
    const now = this.now();
    this.sweep(now);
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { hits: 0, resetAt: now + ttl };
      this.windows.set(key, window);
    }
    window.hits++;
    const timeToExpire = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
    const isBlocked = window.hits > limit;
    return Promise.resolve({ totalHits: window.hits, timeToExpire, isBlocked, timeToBlockExpire: isBlocked ? timeToExpire : 0 });
  }

  get size(): number {
    return this.windows.size;
  }

  /** Drops ended windows at most once per window length, so memory follows the active clients. */
  private sweep(now: number): void {
    if (now < this.nextSweepAt) return;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
    this.nextSweepAt = now + RATE_LIMIT_WINDOW_MS;
  }
}

/**
 * Rate limiting must never take the client API down with Redis: while Redis cannot be reached,
 * requests pass uncounted (fail open) and the outage is logged, at most once per 10 s.
 */
export class FailOpenStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private lastLogged = 0;

  constructor(private readonly inner: ThrottlerStorage) {}

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    try {
      return await this.inner.increment(key, ttl, limit, blockDuration, throttlerName);
    } catch (err) {
      if (Date.now() - this.lastLogged > 10_000) {
        this.lastLogged = Date.now();
        this.logger.error(`Rate-limit storage unavailable (${(err as Error).message}): requests are NOT being rate limited`);
      }
      return { totalHits: 0, timeToExpire: Math.ceil(ttl / 1000), isBlocked: false, timeToBlockExpire: 0 };
    }
  }
}

/**
 * Where counters live: in Redis when REDIS_URL is set, shared by every instance (the client is
 * created with REDIS_KEY_PREFIX), else in this process.
 */
export function createRateLimitStorage(_config: AppConfig, redis: Redis | null = null): ThrottlerStorage {
  return redis ? new FailOpenStorage(new ThrottlerStorageRedisService(redis)) : new FixedWindowMemoryStorage();
}

/** One throttler per name; each applies only to routes that chose it with @RateLimit(name). */
export function rateLimitOptions(config: AppConfig, storage: ThrottlerStorage = createRateLimitStorage(config)): ThrottlerModuleOptions {
  return {
    storage,
    throttlers: RATE_LIMIT_NAMES.map((name) => ({
      name,
      // Only loginPage and stores may be missing (a config built in code before they existed).
      limit: config.rateLimits[name] ?? OPTIONAL_LIMIT_DEFAULTS[name] ?? DEFAULT_LOGIN_PAGE_RATE_LIMIT,
      ttl: RATE_LIMIT_WINDOW_MS,
      // No block beyond the window: the counter itself stays over the limit until the window resets.
      blockDuration: 1,
      skipIf: (context: ExecutionContext) => routeRateLimit(context) !== name,
    })),
  };
}

export const RateLimitModule = ThrottlerModule.forRootAsync({
  inject: [APP_CONFIG, REDIS_CLIENT],
  useFactory: (config: AppConfig, redis: Redis | null) => rateLimitOptions(config, createRateLimitStorage(config, redis)),
});

// normalizeIp parses an IPv6 address into hextets on every call (and a dual-stack server sees IPv4 clients as
// `::ffff:a.b.c.d`): remember the answers for the addresses seen lately, up to a bound, then start again.
const normalizedIps = new Map<string, string>();
const NORMALIZED_IPS_MAX = 10_000;

/** The client IP as Express resolved it: honours TRUST_PROXY, so without it X-Forwarded-For is ignored. IPv6 grouped by /64. */
export function clientIp(req: { ip?: string; socket?: { remoteAddress?: string } }): string {
  const raw = req.ip ?? req.socket?.remoteAddress ?? 'unknown';
  let normalized = normalizedIps.get(raw);
  if (normalized === undefined) {
    if (normalizedIps.size >= NORMALIZED_IPS_MAX) normalizedIps.clear();
    normalized = normalizeIp(raw);
    normalizedIps.set(raw, normalized);
  }
  return normalized;
}

export function rateLimitedError(retryAfterSeconds: number): AppError {
  return new AppError(ErrorCode.RATE_LIMITED, 429, `Too many requests; retry in ${retryAfterSeconds} s`, {
    retry_after_seconds: retryAfterSeconds,
  });
}

/**
 * Counts the request against the route's named limit and sets plain `X-RateLimit-Limit/Remaining/Reset`
 * (seconds until the window resets) on every response, plus `Retry-After` on a 429 with the error body (docs/errors.md, Rate limiting).
 * A guard runs before validation pipes, so a rejected (400) request still counts.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  // Property injection keeps ThrottlerGuard's own constructor untouched.
  @Inject(RATE_LIMIT_OBSERVER) private readonly observer!: RateLimitObserver;
  /** Each route's throttler (null: not limited), resolved from its metadata once: the metadata never changes. */
  private readonly routeThrottlers = new WeakMap<object, ThrottlerRequest['throttler'] | null>();

  /**
   * Only the route's own named limit applies (every other throttler skips it), so go straight to it: the
   * base guard resolves half a dozen metadata values for every configured throttler on every request.
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const handler = context.getHandler();
    let throttler = this.routeThrottlers.get(handler);
    if (throttler === undefined) {
      const name = routeRateLimit(context);
      throttler = (name === undefined ? undefined : this.throttlers.find((t) => t.name === name)) ?? null;
      this.routeThrottlers.set(handler, throttler);
    }
    if (!throttler) return true;
    const ttl = throttler.ttl as number;
    const { getTracker, generateKey } = this.commonOptions;
    return this.handleRequest({
      context,
      throttler,
      limit: throttler.limit as number,
      ttl,
      blockDuration: (throttler.blockDuration as number | undefined) ?? ttl,
      getTracker: getTracker as NonNullable<typeof getTracker>,
      generateKey: generateKey as NonNullable<typeof generateKey>,
    });
  }

  protected override async handleRequest({ context, limit, ttl, throttler, blockDuration }: ThrottlerRequest): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context);
    const key = `rate-limit:${throttler.name}:${clientIp(req as { ip?: string })}`;
    const { totalHits, timeToExpire, isBlocked } = await this.storageService.increment(
      key,
      ttl,
      limit,
      blockDuration,
      throttler.name as string,
    );
    this.setResponseHeader(res, 'X-RateLimit-Limit', limit);
    this.setResponseHeader(res, 'X-RateLimit-Remaining', Math.max(0, limit - totalHits));
    this.setResponseHeader(res, 'X-RateLimit-Reset', timeToExpire);
    if (isBlocked) {
      this.observer.rateLimitRejected(String(throttler.name));
      this.setResponseHeader(res, 'Retry-After', timeToExpire);
      throw rateLimitedError(timeToExpire);
    }
    return true;
  }
}

/**
 * Limits a route (or every route of a controller) to the named per-IP limit from config.rateLimits,
 * e.g. `@RateLimit('activate')`; routes without it are not limited. The dashboard uses `@RateLimit('login')`.
 */
export function RateLimit(name: RateLimitName) {
  return applyDecorators(
    SetMetadata(RATE_LIMIT_KEY, name),
    UseGuards(RateLimitGuard),
    ApiTooManyRequestsResponse({
      description: 'RATE_LIMITED: per-IP limit hit; `Retry-After` header and `details.retry_after_seconds`',
      type: ErrorResponseDto,
      headers: {
        'Retry-After': { description: 'seconds until the window resets', required: true, schema: { type: 'integer', minimum: 1 } },
        'X-RateLimit-Limit': { description: 'requests allowed per window', schema: { type: 'integer', minimum: 0 } },
        'X-RateLimit-Remaining': { description: 'requests left in this window', schema: { type: 'integer', minimum: 0 } },
        'X-RateLimit-Reset': { description: 'seconds until the window resets', schema: { type: 'integer', minimum: 1 } },
      },
    }),
  );
}
