import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { ApiKeyGuard } from '../auth/api-keys';
import { APP_CONFIG, AppConfig } from '../config/app-config';

const digest = (v: string) => createHash('sha256').update(v).digest();

/** Swagger security scheme of the METRICS_TOKEN bearer. */
export const METRICS_TOKEN_SCHEME = 'metrics-token';

/** /metrics: `Authorization: Bearer <METRICS_TOKEN>` for a scraper, or the admin X-API-Key. */
@Injectable()
export class MetricsGuard implements CanActivate {
  private readonly token?: Buffer;
  private readonly apiKeyGuard: ApiKeyGuard;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.token = config.metricsToken ? digest(config.metricsToken) : undefined;
    this.apiKeyGuard = new ApiKeyGuard(config);
  }

  canActivate(context: ExecutionContext): boolean {
    const auth = context.switchToHttp().getRequest<Request>().headers.authorization;
    if (this.token && typeof auth === 'string' && auth.startsWith('Bearer ') && timingSafeEqual(digest(auth.slice(7)), this.token)) {
      return true;
    }
    return this.apiKeyGuard.canActivate(context);
  }
}
