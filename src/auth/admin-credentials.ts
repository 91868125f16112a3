import { Injectable } from '@nestjs/common';
import type { ProductScope } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import { adminTokenHash, looksLikeAdminToken } from './admin-token';
import { AdminTokensRepository, LAST_USED_RESOLUTION_SECONDS, TokenCredentialRow } from './admin-tokens.repository';
import { ApiKeys, invalidCredential, missingCredential } from './api-keys';
import { ADMIN_SCOPES, AdminScope, FULL_ACCESS, isGlobalScope, ScopeRequirement } from '../common/auth/scopes';

/** What an authenticated admin credential is and may do. */
export interface AdminAccess {
  /** The audit log's actor: `key:<id>` or `token:<name>`. */
  actorName: string;
  scopes: readonly AdminScope[];
  /** Product ids (null: every product). */
  products: ProductScope;
  /** When a token stops working (null: never, and always for API_KEY keys); it cannot issue one that outlives it. */
  expiresAt: Date | null;
}

/**
 * Whether the access satisfies a route's requirement. FULL_ACCESS and the global scopes need a credential for every
 * product: a limited token holding signing-keys:manage (stored before that was refused) does not pass.
 */
export function satisfies(access: Pick<AdminAccess, 'scopes' | 'products'>, required: ScopeRequirement): boolean {
  if (required === FULL_ACCESS) return access.products === null && ADMIN_SCOPES.every((s) => access.scopes.includes(s));
  if (isGlobalScope(required) && access.products !== null) return false;
  return access.scopes.includes(required);
}

/**
 * Resolves an admin credential: an API_KEY key (every scope, every product) or a scoped token, looked up by
 * its hash on every request (one unique-index read), so a revoke or an expiry takes effect at once on every
 * instance: nothing is cached.
 */
@Injectable()
export class AdminCredentials {
  constructor(
    private readonly apiKeys: ApiKeys,
    private readonly tokens: AdminTokensRepository,
  ) {}

  /** 401 UNAUTHORIZED when the credential is missing, unknown, revoked or expired. */
  async authenticate(credential: string | undefined): Promise<AdminAccess> {
    if (credential === undefined) throw missingCredential();
    const token = looksLikeAdminToken(credential) ? await this.tokens.findCredentialByHash(adminTokenHash(credential)) : null;
    if (token) return this.tokenAccess(token);
    // Also for an unknown lst_ value: an API_KEY key may happen to start with the prefix.
    const keyId = this.apiKeys.match(credential);
    if (!keyId) throw invalidCredential();
    return { actorName: `key:${keyId}`, scopes: ADMIN_SCOPES, products: null, expiresAt: null };
  }

  private async tokenAccess(row: TokenCredentialRow): Promise<AdminAccess> {
    const now = Date.now();
    if (row.revoked_at) throw new AppError(ErrorCode.UNAUTHORIZED, 401, 'This token has been revoked');
    if (row.expires_at && row.expires_at.getTime() <= now) throw new AppError(ErrorCode.UNAUTHORIZED, 401, 'This token has expired');
    // The row tells whether a write is due, so most requests only read; the UPDATE re-checks for racing instances.
    if (!row.last_used_at || row.last_used_at.getTime() < now - LAST_USED_RESOLUTION_SECONDS * 1000) {
      await this.tokens.touchLastUsed(row.id);
    }
    return { actorName: `token:${row.name}`, scopes: row.scopes, products: row.product_ids, expiresAt: row.expires_at };
  }
}
