import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventRecorder } from '../events/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope, productScopeWithin } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { ErrorCode } from '../common/errors/error-codes';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { parseIsoTimestamp } from '../common/validation/iso-timestamp';
import { ProductsService } from '../products/products.service';
import type { AdminAccess } from './admin-credentials';
import { adminTokenHash, generateAdminToken } from './admin-token';
import { AdminTokensRepository } from './admin-tokens.repository';
import { isGlobalScope } from '../common/auth/scopes';
import { AdminTokenDto, CreateAdminTokenDto, CreatedAdminTokenDto } from './dto/admin-token.dto';

/** Tokens are issued by someone who holds every scope for every product unless told otherwise (the dashboard, an API key). */
export const UNRESTRICTED_ISSUER: Issuer | null = null;

/** What the issuing credential holds: a token hands out no more than that, and never outlives it. */
export type Issuer = Pick<AdminAccess, 'scopes' | 'products' | 'expiresAt'>;

@Injectable()
export class AdminTokensService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tokens: AdminTokensRepository,
    private readonly products: ProductsService,
    private readonly events: EventRecorder,
  ) {}

  /**
   * Issues a token and returns it once. A token can only hand out what it holds itself (its scopes, its
   * products): 403 FORBIDDEN otherwise. 400 for unknown product codes, an expires_at not in the future or
   * later than the issuer's own (no expiry counts as later), and a global scope on a token limited to products;
   * a name in use: 409 CONFLICT.
   */
  async createToken(input: CreateAdminTokenDto, actor: Actor, issuer: Issuer | null = UNRESTRICTED_ISSUER): Promise<CreatedAdminTokenDto> {
    const codes = input.products ?? null;
    if (issuer) {
      const beyond = input.scopes.filter((s) => !issuer.scopes.includes(s));
      if (beyond.length) throw new AppError(ErrorCode.FORBIDDEN, 403, `A token cannot grant scopes it does not hold: ${beyond.join(', ')}`);
    }
    const productIds = codes === null ? null : await this.productIdsOf(codes, issuer);
    if (issuer && !productScopeWithin(productIds, issuer.products)) throw outsideIssuerProducts();
    const global = input.scopes.filter(isGlobalScope);
    if (productIds !== null && global.length) {
      throw AppError.field('scopes', `${global.join(', ')} needs a token for every product: drop products or the scope`);
    }
    const expiresAt = input.expires_at == null ? null : (parseIsoTimestamp(input.expires_at) as Date);
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw AppError.field('expires_at', 'expires_at must be in the future');
    // A token that outlived its issuer would keep the issuer's powers past its end (docs/admin-api.md, Issuing and revoking).
    if (issuer?.expiresAt && (!expiresAt || expiresAt.getTime() > issuer.expiresAt.getTime())) {
      throw AppError.field('expires_at', `expires_at must be no later than the issuing token's: ${issuer.expiresAt.toISOString()}`);
    }
    const token = generateAdminToken();
    try {
      return await this.dataSource.transaction(async (manager) => {
        const saved = await this.tokens.insert(
          { name: input.name, tokenHash: adminTokenHash(token), scopes: input.scopes, productIds, expiresAt },
          manager,
        );
        const shown = AdminTokenDto.from(saved, new Map(productIds?.map((id, i) => [id, (codes as string[])[i]])));
        await this.events.record(manager, {
          type: 'token.created',
          actor,
          details: {
            token_id: saved.id,
            name: saved.name,
            scopes: saved.scopes,
            products: shown.products,
            product_ids: productIds,
            expires_at: shown.expires_at,
          },
        });
        const { id, name, scopes, products, expires_at, created_at } = shown;
        return { id, name, scopes, products, expires_at, created_at, token };
      });
    } catch (err) {
      if (uniqueViolation(err) === 'admin_tokens_name_key') {
        throw AppError.conflict(`A token named "${input.name}" already exists`, { field: 'name' });
      }
      throw err;
    }
  }

  /**
   * The ids of these product codes, in their order. An unknown code is 400 for an issuer of every product; for a
   * limited issuer it is 403 like another product's code, so the answer tells nothing about other products.
   */
  private async productIdsOf(codes: readonly string[], issuer: Issuer | null): Promise<number[]> {
    const ids: number[] = [];
    const unknown: string[] = [];
    for (const code of codes) {
      const product = await this.products.findByCode(code);
      if (product) ids.push(product.id);
      else unknown.push(code);
    }
    if (unknown.length && issuer && issuer.products !== null) throw outsideIssuerProducts();
    if (unknown.length) throw AppError.field('products', `unknown product codes: ${unknown.join(', ')}`);
    return ids;
  }

  /**
   * Every token, revoked and expired ones too, newest first (never the token itself). A credential limited to
   * products sees only tokens limited to (some of) its products.
   */
  async listTokens(query: { limit?: number; offset?: number }, products: ProductScope = ALL_PRODUCTS): Promise<Page<AdminTokenDto>> {
    const { tokens, total } = await this.tokens.listPage(query.limit ?? DEFAULT_PAGE_LIMIT, query.offset ?? 0, products);
    const codes = await this.products.codesById(tokens.flatMap((t) => t.productIds ?? []));
    const now = new Date();
    return { items: tokens.map((t) => AdminTokenDto.from(t, codes, now)), total };
  }

  /**
   * Revokes at once: the guard reads the row on every request. 404 unknown or, for a credential limited to
   * products, a token not limited to (some of) its products; 409 ALREADY_REVOKED.
   */
  async revokeToken(id: number, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<AdminTokenDto> {
    const revoked = await this.dataSource.transaction(async (manager) => {
      const token = await this.tokens.lockById(id, manager, products);
      if (!token) throw AppError.notFound('Token');
      if (token.revokedAt) {
        throw AppError.conflict('The token is already revoked', { revoked_at: token.revokedAt.toISOString() }, ErrorCode.ALREADY_REVOKED);
      }
      const saved = await this.tokens.markRevoked(token.id, new Date(), manager);
      await this.events.record(manager, { type: 'token.revoked', actor, details: { token_id: saved.id, name: saved.name } });
      return saved;
    });
    return AdminTokenDto.from(revoked, await this.products.codesById(revoked.productIds ?? []));
  }
}

const outsideIssuerProducts = () =>
  new AppError(ErrorCode.FORBIDDEN, 403, 'A token limited to products can only issue tokens limited to (some of) its products');
