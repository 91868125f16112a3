import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { licensePolicyOverrides } from '../common/seat-policy/license-policy';
import { unofferedFeaturesMessage } from '../licenses/licenses.service';
import type { Product } from '../products/product.entity';
import { ProductsService } from '../products/products.service';
import { CreateStorePlanDto, StorePlanDto, UpdateStorePlanDto } from './dto/store-plan.dto';
import { STORE_PLAN_PRICE_INDEX, StorePlan } from './store-plan.entity';
import { StoresRepository } from './stores.repository';

/** Store plans (docs/stores.md, Plans): which price sells which licence. Deleting one leaves its licences as they are. */
@Injectable()
export class StorePlansService {
  constructor(
    private readonly stores: StoresRepository,
    private readonly products: ProductsService,
  ) {}

  async create(input: CreateStorePlanDto): Promise<StorePlanDto> {
    const product = await this.products.getActiveProductByCode(input.product_code);
    checkFeatures(input.features, product);
    const plan = await this.saveUnique(() =>
      this.stores.insertPlan({
        store: input.store,
        priceId: input.price_id,
        productId: product.id,
        licenseType: input.license_type,
        limits: input.limits ?? {},
        features: input.features ?? null,
        policy: licensePolicyOverrides(input.policy ?? {}),
        graceDays: input.grace_days ?? 7,
        onEnd: input.on_end,
      }),
    );
    plan.product = product;
    return StorePlanDto.from(plan);
  }

  async list(): Promise<StorePlanDto[]> {
    return (await this.stores.listPlans()).map((p) => StorePlanDto.from(p));
  }

  async get(id: number): Promise<StorePlanDto> {
    return StorePlanDto.from(await this.load(id));
  }

  async update(id: number, input: UpdateStorePlanDto): Promise<StorePlanDto> {
    if (!Object.values(input).some((v) => v !== undefined)) throw AppError.field('body', 'Give at least one field to change');
    const plan = await this.load(id);
    const product =
      input.product_code !== undefined ? await this.products.getActiveProductByCode(input.product_code) : (plan.product as Product);
    const features = input.features !== undefined ? input.features : plan.features;
    checkFeatures(features ?? undefined, product);
    Object.assign(plan, {
      store: input.store ?? plan.store,
      priceId: input.price_id ?? plan.priceId,
      productId: product.id,
      product,
      licenseType: input.license_type ?? plan.licenseType,
      limits: input.limits ?? plan.limits,
      features,
      policy: input.policy !== undefined ? licensePolicyOverrides(input.policy) : plan.policy,
      graceDays: input.grace_days ?? plan.graceDays,
      onEnd: input.on_end ?? plan.onEnd,
    });
    const saved = await this.saveUnique(() => this.stores.savePlan(plan));
    saved.product = product;
    return StorePlanDto.from(saved);
  }

  async remove(id: number): Promise<void> {
    if (!(await this.stores.deletePlan(id))) throw AppError.notFound('Store plan');
  }

  private async load(id: number): Promise<StorePlan> {
    const plan = await this.stores.getPlan(id);
    if (!plan) throw AppError.notFound('Store plan');
    return plan;
  }

  private async saveUnique(save: () => Promise<StorePlan>): Promise<StorePlan> {
    try {
      return await save();
    } catch (err) {
      if (uniqueViolation(err) === STORE_PLAN_PRICE_INDEX)
        throw AppError.conflict('The store has a plan for this price already', { field: 'price_id' });
      throw err;
    }
  }
}

function checkFeatures(features: string[] | undefined, product: Product): void {
  const message = features ? unofferedFeaturesMessage(features, product) : undefined;
  if (message) throw AppError.field('features', message);
}
