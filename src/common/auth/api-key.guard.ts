import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { AppError } from '../errors/app-error';
import { ErrorCode } from '../errors/error-codes';
import type { RequestWithActor } from './actor';

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Non-secret id of an API key for the audit log: first 8 hex of its SHA-256. */
export const apiKeyId = (key: string) => sha256(key).toString('hex').slice(0, 8);

/**
 * Admin API guard: `X-API-Key` must equal one of the configured keys. Keys are compared
 * as SHA-256 digests with timingSafeEqual, so neither content nor length leaks through timing,
 * and every configured key is checked (no early exit).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly keys: { digest: Buffer; id: string }[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.keys = config.apiKeys.map((key) => ({ digest: sha256(key), id: apiKeyId(key) }));
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<RequestWithActor>();
    const header = req.headers['x-api-key'];
    const provided = typeof header === 'string' ? header : '';
    const digest = sha256(provided);
    let matched: string | undefined;
    for (const key of this.keys) {
      if (timingSafeEqual(digest, key.digest) && provided.length > 0) matched = key.id;
    }
    if (!matched) {
      throw new AppError(ErrorCode.UNAUTHORIZED, 401, header === undefined ? 'Missing X-API-Key header' : 'Invalid API key');
    }
    req.actor = { type: 'admin_api', name: `key:${matched}`, ip: req.ip ?? null };
    return true;
  }
}
