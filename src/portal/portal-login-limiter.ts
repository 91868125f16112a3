import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { createHash } from 'node:crypto';
import { clientIp } from '../common/http/throttling';
import { APP_CONFIG, type AppConfig, PORTAL_LOGIN_WINDOW_MS, portalConfig } from '../config/app-config';

/**
 * RATE_LIMIT_PORTAL_LOGIN (docs/portal.md, Signing in): sign-in links asked for per client IP and per address, known or
 * not, in a fixed 15-minute window, on the rate limits' own storage (Redis with REDIS_URL, so instances share counts).
 */
@Injectable()
export class PortalLoginLimiter {
  private readonly limit: number;

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limit = portalConfig(config).loginLimit;
  }

  /** Counts one request against both buckets; true while both are within the limit. */
  async allow(req: { ip?: string }, email: string): Promise<boolean> {
    // The address only as a hash: counters are not a list of who asked.
    const address = createHash('sha256').update(email).digest('hex');
    const [byIp, byAddress] = await Promise.all([
      this.storage.increment(`portal-login:ip:${clientIp(req)}`, PORTAL_LOGIN_WINDOW_MS, this.limit, 1, 'portalLogin'),
      this.storage.increment(`portal-login:address:${address}`, PORTAL_LOGIN_WINDOW_MS, this.limit, 1, 'portalLogin'),
    ]);
    return !byIp.isBlocked && !byAddress.isBlocked;
  }
}
