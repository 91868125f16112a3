import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { CreateProductDto, UpdateProductDto } from './dto/product.dto';
import { Product, PRODUCT_CODE_INDEX, PRODUCT_KEY_PREFIX_INDEX } from './product.entity';
import { ProductsRepository } from './products.repository';

@Injectable()
export class ProductsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly products: ProductsRepository,
    private readonly audit: AuditService,
  ) {}

  listProducts(): Promise<Product[]> {
    return this.products.listAll();
  }

  async getProduct(id: number): Promise<Product> {
    const product = await this.products.getById(id);
    if (!product) throw AppError.notFound('Product');
    return product;
  }

  /** Used by licences: an unknown or inactive product is a validation error naming `product_code`. */
  async getActiveProductByCode(code: string): Promise<Product> {
    const product = await this.products.getByCode(code);
    if (!product || !product.active) throw AppError.field('product_code', `product_code "${code}" is not an active product`);
    return product;
  }

  findByCode(code: string): Promise<Product | null> {
    return this.products.getByCode(code);
  }

  async createProduct(input: CreateProductDto, actor: Actor): Promise<Product> {
    return this.withUniqueCodes(() =>
      this.dataSource.transaction(async (manager) => {
        const product = await this.products.insert(
          {
            code: input.code,
            name: input.name,
            keyPrefix: input.key_prefix,
            defaultLimits: input.default_limits ?? { max_installations: 1 },
            availableFeatures: input.available_features ?? [],
            active: input.active ?? true,
          },
          manager,
        );
        await this.audit.record(
          { action: 'product.created', actor, productCode: product.code, details: { product_id: product.id, ...input } },
          manager,
        );
        return product;
      }),
    );
  }

  async updateProduct(id: number, input: UpdateProductDto, actor: Actor): Promise<Product> {
    // An empty body used to save nothing yet write a product.updated entry (as licences do, refuse it).
    if (!Object.values(input).some((v) => v !== undefined)) throw AppError.field('body', 'Give at least one field to change');
    return this.withUniqueCodes(() =>
      this.dataSource.transaction(async (manager) => {
        const product = await this.products.lockById(id, manager);
        if (!product) throw AppError.notFound('Product');
        if (input.code !== undefined) product.code = input.code;
        if (input.name !== undefined) product.name = input.name;
        if (input.key_prefix !== undefined) product.keyPrefix = input.key_prefix;
        if (input.default_limits !== undefined) product.defaultLimits = input.default_limits;
        if (input.available_features !== undefined) product.availableFeatures = input.available_features;
        if (input.active !== undefined) product.active = input.active;
        const saved = await this.products.save(product, manager);
        await this.audit.record(
          { action: 'product.updated', actor, productCode: saved.code, details: { product_id: id, changes: input } },
          manager,
        );
        return saved;
      }),
    );
  }

  /** Both a pre-check and the unique index could catch a duplicate; the index is the one that is race-free. */
  private async withUniqueCodes<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      const constraint = uniqueViolation(err);
      if (constraint !== PRODUCT_CODE_INDEX && constraint !== PRODUCT_KEY_PREFIX_INDEX) throw err;
      const field = constraint === PRODUCT_KEY_PREFIX_INDEX ? 'key_prefix' : 'code';
      throw AppError.conflict(`A product with this ${field} already exists`, { field });
    }
  }
}
