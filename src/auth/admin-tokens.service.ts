import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventRecorder } from '../audit/event-recorder';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { ErrorCode } from '../common/errors/error-codes';
import { DEFAULT_PAGE_LIMIT, Page } from '../common/http/page-query.dto';
import { parseIsoTimestamp } from '../common/validation/iso-timestamp';
import { ProductsService } from '../products/products.service';
import type { AdminAccess } from './admin-credentials';
import { adminTokenHash, generateAdminToken } from './admin-token';
import { AdminTokensRepository } from './admin-tokens.repository';
import { AdminTokenDto, CreateAdminTokenDto, CreatedAdminTokenDto } from './dto/admin-token.dto';

/** Tokens are issued by someone who holds every scope for every product unless told otherwise (the dashboard, an API key). */
export const UNRESTRICTED_ISSUER: Pick<AdminAccess, 'scopes' | 'products'> | null = null;

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
   * products): 403 FORBIDDEN otherwise. Unknown product codes and an expires_at not in the future: 400;
   * a name in use: 409 CONFLICT.
   */
  async createToken(
    input: CreateAdminTokenDto,
    actor: Actor,
    issuer: Pick<AdminAccess, 'scopes' | 'products'> | null = UNRESTRICTED_ISSUER,
  ): Promise<CreatedAdminTokenDto> {
    const products = input.products ?? null;
    if (issuer) {
      const beyond = input.scopes.filter((s) => !issuer.scopes.includes(s));
      if (beyond.length) throw new AppError(ErrorCode.FORBIDDEN, 403, `A token cannot grant scopes it does not hold: ${beyond.join(', ')}`);
      const allowed = issuer.products;
      if (allowed !== null && (products === null || products.some((p) => !allowed.includes(p)))) {
        throw new AppError(
          ErrorCode.FORBIDDEN,
          403,
          `A token limited to products can only issue tokens limited to those: ${allowed.join(', ')}`,
        );
      }
    }
    const expiresAt = input.expires_at == null ? null : (parseIsoTimestamp(input.expires_at) as Date);
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw AppError.field('expires_at', 'expires_at must be in the future');
    if (products) {
      const unknown: string[] = [];
      for (const code of products) if (!(await this.products.findByCode(code))) unknown.push(code);
      if (unknown.length) throw AppError.field('products', `unknown product codes: ${unknown.join(', ')}`);
    }
    const token = generateAdminToken();
    try {
      return await this.dataSource.transaction(async (manager) => {
        const saved = await this.tokens.insert(
          { name: input.name, tokenHash: adminTokenHash(token), scopes: input.scopes, products, expiresAt },
          manager,
        );
        const shown = AdminTokenDto.from(saved);
        await this.events.record(manager, {
          type: 'token.created',
          actor,
          details: { token_id: saved.id, name: saved.name, scopes: saved.scopes, products, expires_at: shown.expires_at },
        });
        const { id, name, scopes, expires_at, created_at } = shown;
        return { id, name, scopes, products, expires_at, created_at, token };
      });
    } catch (err) {
      if (uniqueViolation(err) === 'admin_tokens_name_key') {
        throw AppError.conflict(`A token named "${input.name}" already exists`, { field: 'name' });
      }
      throw err;
    }
  }

  /** Every token, revoked and expired ones too, newest first (never the token itself). */
  async listTokens(query: { limit?: number; offset?: number }): Promise<Page<AdminTokenDto>> {
    const { tokens, total } = await this.tokens.listPage(query.limit ?? DEFAULT_PAGE_LIMIT, query.offset ?? 0);
    const now = new Date();
    return { items: tokens.map((t) => AdminTokenDto.from(t, now)), total };
  }

  /** Revokes at once: the guard reads the row on every request. 404 unknown, 409 ALREADY_REVOKED. */
  async revokeToken(id: number, actor: Actor): Promise<AdminTokenDto> {
    return this.dataSource.transaction(async (manager) => {
      const token = await this.tokens.lockById(id, manager);
      if (!token) throw AppError.notFound('Token');
      if (token.revokedAt) {
        throw AppError.conflict('The token is already revoked', { revoked_at: token.revokedAt.toISOString() }, ErrorCode.ALREADY_REVOKED);
      }
      token.revokedAt = new Date();
      const saved = await this.tokens.save(token, manager);
      await this.events.record(manager, { type: 'token.revoked', actor, details: { token_id: saved.id, name: saved.name } });
      return AdminTokenDto.from(saved);
    });
  }
}
