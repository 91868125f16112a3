import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { preparedQuery } from '../database/prepared-query';
import { AdminToken } from './admin-token.entity';
import type { AdminScope } from '../common/auth/scopes';

/** The columns the guard needs to decide, read on every admin request by the unique hash index. */
export interface TokenCredentialRow {
  id: number;
  name: string;
  scopes: AdminScope[];
  product_ids: number[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

/** How often last_used_at may be written per token: reads stay reads. */
export const LAST_USED_RESOLUTION_SECONDS = 60;

@Injectable()
export class AdminTokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(AdminToken);
  }

  async findCredentialByHash(tokenHash: string): Promise<TokenCredentialRow | null> {
    const { rows } = await preparedQuery<TokenCredentialRow>(
      this.dataSource.manager,
      'admin-token-by-hash',
      `SELECT id, name, scopes, product_ids, expires_at, revoked_at, last_used_at FROM admin_tokens WHERE token_hash = $1`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  /** Conditional, so instances racing on the same token write it at most once per LAST_USED_RESOLUTION_SECONDS. */
  async touchLastUsed(id: number): Promise<void> {
    await preparedQuery(
      this.dataSource.manager,
      'admin-token-touch',
      `UPDATE admin_tokens SET last_used_at = now()
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [id, LAST_USED_RESOLUTION_SECONDS],
    );
  }

  insert(token: Partial<AdminToken>, manager: EntityManager): Promise<AdminToken> {
    return this.repo(manager).save(this.repo(manager).create(token));
  }

  /** With a product scope, a token whose products are not all within it is not found. */
  lockById(id: number, manager: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<AdminToken | null> {
    const query = this.repo(manager).createQueryBuilder('t').setLock('pessimistic_write').where('t.id = :id', { id });
    return withinScope(query, products).getOne();
  }

  save(token: AdminToken, manager: EntityManager): Promise<AdminToken> {
    return this.repo(manager).save(token);
  }

  /** Newest first; with a product scope only the tokens whose products all lie within it. */
  async listPage(limit: number, offset: number, products: ProductScope = ALL_PRODUCTS): Promise<{ tokens: AdminToken[]; total: number }> {
    const query = this.repo().createQueryBuilder('t').orderBy('t.created_at', 'DESC').addOrderBy('t.id', 'DESC').take(limit).skip(offset);
    const [tokens, total] = await withinScope(query, products).getManyAndCount();
    return { tokens, total };
  }
}

/** The SQL of productScopeWithin (common/auth/actor.ts): a token for every product is within no limited scope. */
function withinScope(query: SelectQueryBuilder<AdminToken>, products: ProductScope): SelectQueryBuilder<AdminToken> {
  if (products === null) return query;
  return query.andWhere('t.product_ids IS NOT NULL AND t.product_ids <@ CAST(:scope AS int[])', { scope: [...products] });
}
