import { productDefaultPolicy } from '../common/seat-policy/license-policy';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventRecorder } from '../events/event-recorder';
import { type Actor, ALL_PRODUCTS, type ProductScope } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { ErrorCode } from '../common/errors/error-codes';
import { CreateProductDto, UpdateProductDto } from './dto/product.dto';
import { Product, PRODUCT_CODE_INDEX, PRODUCT_KEY_PREFIX_INDEX } from './product.entity';
import { ProductsRepository } from './products.repository';

@Injectable()
export class ProductsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly products: ProductsRepository,
    private readonly events: EventRecorder,
  ) {}

  /** The service over a data source of its own, outside Nest (the `licence-server` command). */
  static over(dataSource: DataSource): ProductsService {
    return new ProductsService(dataSource, new ProductsRepository(dataSource), new EventRecorder(dataSource));
  }

  listProducts(products: ProductScope = ALL_PRODUCTS): Promise<Product[]> {
    return this.products.listAll(products);
  }

  /** 404 NOT_FOUND when unknown or outside the credential's products. */
  async getProduct(id: number, products: ProductScope = ALL_PRODUCTS): Promise<Product> {
    const product = await this.products.getById(id, undefined, products);
    if (!product) throw AppError.notFound('Product');
    return product;
  }

  /** Used by licences: an unknown or inactive product is a validation error naming `product_code`. */
  async getActiveProductByCode(code: string): Promise<Product> {
    const product = await this.products.getByCode(code);
    if (!product || !product.active) throw AppError.field('product_code', `product_code "${code}" is not an active product`);
    return product;
  }

  /** The current code of each of these product ids (a product limit is stored as ids and shown as codes). */
  async codesById(ids: Iterable<number>): Promise<Map<number, string>> {
    const wanted = [...new Set(ids)];
    if (wanted.length === 0) return new Map();
    return new Map((await this.products.listAll(wanted)).map((p) => [p.id, p.code]));
  }

  findByCode(code: string): Promise<Product | null> {
    return this.products.getByCode(code);
  }

  /** A credential limited to products cannot add one (it would not see it): 403 FORBIDDEN. */
  async createProduct(input: CreateProductDto, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<Product> {
    if (products) throw new AppError(ErrorCode.FORBIDDEN, 403, 'A token limited to products cannot create products');
    return this.withUniqueCodes(() =>
      this.dataSource.transaction(async (manager) => {
        const product = await this.products.insert(
          {
            code: input.code,
            name: input.name,
            keyPrefix: input.key_prefix,
            defaultLimits: input.default_limits ?? { max_installations: 1 },
            availableFeatures: input.available_features ?? [],
            defaultPolicy: productDefaultPolicy(input.default_policy ?? {}),
            active: input.active ?? true,
            trial: input.trial ?? null,
            updatePolicy: input.update_policy ?? 'current',
          },
          manager,
        );
        await this.events.record(manager, {
          type: 'product.created',
          actor,
          productId: product.id,
          productCode: product.code,
          details: { product_id: product.id, ...input },
        });
        return product;
      }),
    );
  }

  /** Within the credential's products (404 outside); a limited credential cannot change a code its list names (403). */
  async updateProduct(id: number, input: UpdateProductDto, actor: Actor, products: ProductScope = ALL_PRODUCTS): Promise<Product> {
    // An empty body used to save nothing yet write a product.updated entry (as licences do, refuse it).
    if (!Object.values(input).some((v) => v !== undefined)) throw AppError.field('body', 'Give at least one field to change');
    return this.withUniqueCodes(() =>
      this.dataSource.transaction(async (manager) => {
        const product = await this.products.lockById(id, manager, products);
        if (product && products && input.code !== undefined && input.code !== product.code) {
          throw new AppError(ErrorCode.FORBIDDEN, 403, 'A token limited to products cannot change a product code');
        }
        if (!product) throw AppError.notFound('Product');
        if (input.code !== undefined) product.code = input.code;
        if (input.name !== undefined) product.name = input.name;
        if (input.key_prefix !== undefined) product.keyPrefix = input.key_prefix;
        if (input.default_limits !== undefined) product.defaultLimits = input.default_limits;
        if (input.available_features !== undefined) product.availableFeatures = input.available_features;
        // Key by key, as a licence's overrides: null is a value here ("never"), an omitted key stays.
        if (input.default_policy !== undefined)
          product.defaultPolicy = productDefaultPolicy({ ...product.defaultPolicy, ...input.default_policy });
        if (input.active !== undefined) product.active = input.active;
        if (input.trial !== undefined) product.trial = input.trial;
        if (input.update_policy !== undefined) product.updatePolicy = input.update_policy;
        const saved = await this.products.save(product, manager);
        await this.events.record(manager, {
          type: 'product.updated',
          actor,
          productId: saved.id,
          productCode: saved.code,
          details: { product_id: id, changes: input },
        });
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
