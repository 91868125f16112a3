import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import type { RequestWithActor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { APP_CONFIG, AppConfig } from '../config/app-config';

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Non-secret id of an API key for the audit log: first 8 hex of its SHA-256. */
export const apiKeyId = (key: string) => sha256(key).toString('hex').slice(0, 8);

/**
 * The admin credential a request carries: `X-API-Key: <credential>` or `Authorization: Bearer <credential>`
 * (docs/admin-api.md, Credentials: both work for every admin credential). undefined when neither header is there.
 */
export function credentialFrom(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string') return header;
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer[ ]+(.*)$/i.exec(authorization);
    return match ? match[1].trim() : '';
  }
  return undefined;
}

/**
 * The keys of API_KEY. Keys are compared as SHA-256 digests with timingSafeEqual, so neither content nor
 * length leaks through timing, and every configured key is checked (no early exit).
 */
@Injectable()
export class ApiKeys {
  private readonly keys: { digest: Buffer; id: string }[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.keys = config.apiKeys.map((key) => ({ digest: sha256(key), id: apiKeyId(key) }));
  }

  /** The id of the matching key, or undefined. */
  match(provided: string): string | undefined {
    const digest = sha256(provided);
    let matched: string | undefined;
    for (const key of this.keys) {
      if (timingSafeEqual(digest, key.digest) && provided.length > 0) matched = key.id;
    }
    return matched;
  }
}

export const missingCredential = () => new AppError(ErrorCode.UNAUTHORIZED, 401, 'Missing X-API-Key or Authorization: Bearer header');
export const invalidCredential = () => new AppError(ErrorCode.UNAUTHORIZED, 401, 'Invalid API key');

/** API_KEY keys only (no scoped tokens), for /metrics: a key from the environment, either header. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly keys: ApiKeys;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.keys = new ApiKeys(config);
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<RequestWithActor>();
    const provided = credentialFrom(req);
    // Compared even when missing, so every answer costs the same comparisons.
    const id = this.keys.match(provided ?? '');
    if (provided === undefined) throw missingCredential();
    if (!id) throw invalidCredential();
    req.actor = { type: 'admin_api', name: `key:${id}`, ip: req.ip ?? null };
    return true;
  }
}
