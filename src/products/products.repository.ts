import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, FindOptionsWhere, In } from 'typeorm';
import { ALL_PRODUCTS, type ProductScope, productScopeIncludes } from '../common/auth/actor';
import { Product } from './product.entity';

/**
 * The products table. Style: TypeORM's repository API on the Product entity (docs/architecture.md, Database style);
 * other modules read products through the product_catalog view, never this table.
 */
@Injectable()
export class ProductsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(Product);
  }

  /** Every product the scope includes, in id order. */
  listAll(products: ProductScope = ALL_PRODUCTS): Promise<Product[]> {
    return this.repo().find({ where: inScope(products), order: { id: 'ASC' } });
  }

  getById(id: number, manager?: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<Product | null> {
    return this.repo(manager).findOneBy({ id: idInScope(id, products) });
  }

  getByCode(code: string, manager?: EntityManager): Promise<Product | null> {
    return this.repo(manager).findOneBy({ code });
  }

  lockById(id: number, manager: EntityManager, products: ProductScope = ALL_PRODUCTS): Promise<Product | null> {
    return this.repo(manager).findOne({ where: { id: idInScope(id, products) }, lock: { mode: 'pessimistic_write' } });
  }

  insert(product: Partial<Product>, manager: EntityManager): Promise<Product> {
    return this.repo(manager).save(this.repo(manager).create(product));
  }

  save(product: Product, manager: EntityManager): Promise<Product> {
    return this.repo(manager).save(product);
  }
}

/** The id to look for: an id outside the scope looks for -1, which is no product's. */
const idInScope = (id: number, products: ProductScope): number => (productScopeIncludes(products, id) ? id : -1);

/** The product condition of a scope: nothing for every product, else `id IN (...)` (never `IN ()`: -1 is no id). */
const inScope = (products: ProductScope): FindOptionsWhere<Product> => (products ? { id: In(products.length ? [...products] : [-1]) } : {});
