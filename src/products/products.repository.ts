import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ALL_PRODUCTS, type ProductScope, productScopeIncludes } from '../common/auth/actor';
import { param, raw, runStatement, sql, type Sql } from '../database/statement';
import type { Product } from './product.entity';
import { PRODUCT_ROWS, type ProductRow } from './product-rows';

/** What creating a product decides; the id and times are the table's. */
export type NewProduct = Omit<Product, 'id' | 'createdAt' | 'updatedAt'>;

/**
 * The products table. Style: named SQL with typed rows (docs/architecture.md, Database style); other modules read
 * products through the product_catalog view, never this table.
 */
@Injectable()
export class ProductsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Every product the scope includes, in id order. */
  async listAll(products: ProductScope = ALL_PRODUCTS): Promise<Product[]> {
    const ids = param(products ? [...products] : null);
    const rows = await runStatement<ProductRow>(
      this.dataSource.manager,
      'products-list',
      sql`SELECT ${raw(PRODUCT_ROWS.columns)} FROM products WHERE ${ids}::int[] IS NULL OR id = ANY(${ids}::int[]) ORDER BY id`,
    );
    return rows.map(PRODUCT_ROWS.fromRow);
  }

  getById(id: number, manager?: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<Product | null> {
    return this.one(manager, 'products-get-by-id', sql`id = ${idInScope(id, products)}`);
  }

  getByCode(code: string, manager?: EntityManager): Promise<Product | null> {
    return this.one(manager, 'products-get-by-code', sql`code = ${code}`);
  }

  lockById(id: number, manager: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<Product | null> {
    return this.one(manager, 'products-lock-by-id', sql`id = ${idInScope(id, products)} FOR UPDATE`);
  }

  async insert(p: NewProduct, manager: EntityManager): Promise<Product> {
    const rows = await runStatement<ProductRow>(
      manager,
      'products-insert',
      sql`INSERT INTO products (code, name, key_prefix, default_limits, default_policy, available_features, active, trial, update_policy)
       VALUES (${p.code}, ${p.name}, ${p.keyPrefix}, ${JSON.stringify(p.defaultLimits)}::jsonb, ${JSON.stringify(p.defaultPolicy)}::jsonb,
         ${JSON.stringify(p.availableFeatures)}::jsonb, ${p.active}, ${jsonOrNull(p.trial)}::jsonb, ${p.updatePolicy})
       RETURNING ${raw(PRODUCT_ROWS.columns)}`,
    );
    return PRODUCT_ROWS.fromRow(rows[0]);
  }

  /** Writes every changeable column of a locked product and stamps updated_at; returns it as stored. */
  async save(p: Product, manager: EntityManager): Promise<Product> {
    const rows = await runStatement<ProductRow>(
      manager,
      'products-update',
      sql`UPDATE products SET code = ${p.code}, name = ${p.name}, key_prefix = ${p.keyPrefix},
         default_limits = ${JSON.stringify(p.defaultLimits)}::jsonb, default_policy = ${JSON.stringify(p.defaultPolicy)}::jsonb,
         available_features = ${JSON.stringify(p.availableFeatures)}::jsonb, active = ${p.active}, trial = ${jsonOrNull(p.trial)}::jsonb,
         update_policy = ${p.updatePolicy}, updated_at = now()
       WHERE id = ${p.id} RETURNING ${raw(PRODUCT_ROWS.columns)}`,
    );
    return PRODUCT_ROWS.fromRow(rows[0]);
  }

  private async one(manager: EntityManager | undefined, name: string, condition: Sql): Promise<Product | null> {
    const rows = await runStatement<ProductRow>(
      manager ?? this.dataSource.manager,
      name,
      sql`SELECT ${raw(PRODUCT_ROWS.columns)} FROM products WHERE ${condition}`,
    );
    return rows.length ? PRODUCT_ROWS.fromRow(rows[0]) : null;
  }
}

const jsonOrNull = (value: unknown): string | null => (value == null ? null : JSON.stringify(value));

/** The id to look for: an id outside the scope looks for -1, which is no product's. */
const idInScope = (id: number, products: ProductScope): number => (productScopeIncludes(products, id) ? id : -1);
