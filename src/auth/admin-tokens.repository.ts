import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { rowShape, type RowOf } from '../database/row-shape';
import { param, raw, runStatement, type Sql, sql } from '../database/statement';
import { ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { AdminToken } from './admin-token.entity';

/** The columns the guard needs to decide, read on every admin request by the unique hash index. */
export type TokenCredentialRow = Pick<TokenRow, 'id' | 'name' | 'scopes' | 'product_ids' | 'expires_at' | 'revoked_at' | 'last_used_at'>;

/** How often last_used_at may be written per token: reads stay reads. */
export const LAST_USED_RESOLUTION_SECONDS = 60;

/** Admin API tokens (admin_tokens). Style: named SQL with typed rows (docs/architecture.md, Database style). */
@Injectable()
export class AdminTokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findCredentialByHash(tokenHash: string): Promise<TokenCredentialRow | null> {
    const rows = await runStatement<TokenCredentialRow>(
      this.dataSource.manager,
      'admin-token-by-hash',
      sql`SELECT id, name, scopes, product_ids, expires_at, revoked_at, last_used_at FROM admin_tokens WHERE token_hash = ${tokenHash}`,
    );
    return rows[0] ?? null;
  }

  /** Conditional, so instances racing on the same token write it at most once per LAST_USED_RESOLUTION_SECONDS. */
  async touchLastUsed(id: number): Promise<void> {
    await runStatement(
      this.dataSource.manager,
      'admin-token-touch',
      sql`UPDATE admin_tokens SET last_used_at = now()
       WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => ${LAST_USED_RESOLUTION_SECONDS}))`,
    );
  }

  async insert(
    token: Pick<AdminToken, 'name' | 'tokenHash' | 'scopes' | 'productIds' | 'expiresAt'>,
    manager: EntityManager,
  ): Promise<AdminToken> {
    const rows = await runStatement<TokenRow>(
      manager,
      'admin-tokens-insert',
      sql`INSERT INTO admin_tokens AS t (name, token_hash, scopes, product_ids, expires_at) VALUES (${token.name}, ${token.tokenHash}, ${token.scopes}::text[], ${token.productIds}::int[], ${token.expiresAt})
       RETURNING ${raw(TOKEN_COLUMNS)}`,
    );
    return TOKEN_ROWS.fromRow(rows[0]);
  }

  /** SELECT ... FOR UPDATE; with a product scope, a token whose products are not all within it is not found. */
  async lockById(id: number, manager: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<AdminToken | null> {
    const rows = await runStatement<TokenRow>(
      manager,
      'admin-tokens-lock-by-id',
      sql`SELECT ${raw(TOKEN_COLUMNS)} FROM admin_tokens t WHERE t.id = ${id} AND ${withinScope(products)} FOR UPDATE`,
    );
    return rows.length ? TOKEN_ROWS.fromRow(rows[0]) : null;
  }

  /** Stamps revoked_at on a locked token; returns it as stored. */
  async markRevoked(id: number, revokedAt: Date, manager: EntityManager): Promise<AdminToken> {
    const rows = await runStatement<TokenRow>(
      manager,
      'admin-tokens-mark-revoked',
      sql`WITH revoked AS (UPDATE admin_tokens t SET revoked_at = ${revokedAt} WHERE t.id = ${id} RETURNING ${raw(TOKEN_COLUMNS)}) SELECT * FROM revoked`,
    );
    return TOKEN_ROWS.fromRow(rows[0]);
  }

  /** Newest first; with a product scope only the tokens whose products all lie within it. */
  async listPage(limit: number, offset: number, products: ProductScope = ALL_PRODUCTS): Promise<{ tokens: AdminToken[]; total: number }> {
    const [rows, [{ total }]] = await Promise.all([
      runStatement<TokenRow>(
        this.dataSource.manager,
        'admin-tokens-page',
        sql`SELECT ${raw(TOKEN_COLUMNS)} FROM admin_tokens t WHERE ${withinScope(products)} ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit} OFFSET ${offset}`,
      ),
      runStatement<{ total: number }>(
        this.dataSource.manager,
        'admin-tokens-count',
        sql`SELECT count(*)::int AS total FROM admin_tokens t WHERE ${withinScope(products)}`,
      ),
    ]);
    return { tokens: rows.map(TOKEN_ROWS.fromRow), total };
  }
}

/**
 * The SQL of productScopeWithin (common/auth/actor.ts) for `products` (null: every product): a token for every product
 * is within no limited scope.
 */
function withinScope(products: ProductScope): Sql {
  const scope = param(products === null ? null : [...products]);
  return sql`(${scope}::int[] IS NULL OR (t.product_ids IS NOT NULL AND t.product_ids <@ ${scope}::int[]))`;
}

/** An admin_tokens row read into an AdminToken. */
const TOKEN_ROWS = rowShape(
  () => new AdminToken(),
  'id, name, token_hash, scopes, product_ids, expires_at, created_at, last_used_at, revoked_at',
);

const TOKEN_COLUMNS = TOKEN_ROWS.columnsOf('t');

/** An admin_tokens row as pg returns it. */
type TokenRow = RowOf<typeof TOKEN_ROWS>;
