import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EventRecorder } from '../events/event-recorder';
import type { Actor } from '../common/auth/actor';
import { AppError } from '../common/errors/app-error';
import { uniqueViolation } from '../common/errors/database-errors';
import { licensePolicyOverrides } from '../common/seat-policy/license-policy';
import { unofferedFeaturesMessage } from '../licenses/use-cases/license-rules';
import type { Product } from '../products/product.entity';
import { ProductsService } from '../products/products.service';
import { CreateStorePlanDto, StorePlanDto, UpdateStorePlanDto } from './dto/store-plan.dto';
import { STORE_PLAN_PRICE_INDEX, StorePlan } from './store-plan.entity';
import { StorePlansRepository } from './store-plans.repository';

/**
 * Store plans (docs/stores.md, Plans): which price sells which licence. Deleting one leaves its licences as they are.
 * Each change commits with its audit entry (store_plan.created, .updated, .deleted).
 */
@Injectable()
export class StorePlansService {
  constructor(
    private readonly plans: StorePlansRepository,
    private readonly products: ProductsService,
    private readonly events: EventRecorder,
  ) {}

  async create(input: CreateStorePlanDto, actor: Actor): Promise<StorePlanDto> {
    const product = await this.products.getActiveProductByCode(input.product_code);
    checkFeatures(input.features, product);
    const plan = await this.saveUnique(async (manager) => {
      const saved = await this.plans.insertPlan(
        {
          store: input.store,
          priceId: input.price_id,
          productId: product.id,
          licenseType: input.license_type,
          limits: input.limits ?? {},
          features: input.features ?? null,
          policy: licensePolicyOverrides(input.policy ?? {}),
          graceDays: input.grace_days ?? 7,
          onEnd: input.on_end ?? 'expire',
        },
        manager,
      );
      saved.product = product;
      await this.record(manager, 'store_plan.created', saved, actor);
      return saved;
    });
    return StorePlanDto.from(plan);
  }

  async list(): Promise<StorePlanDto[]> {
    return (await this.plans.listPlans()).map((p) => StorePlanDto.from(p));
  }

  async get(id: number): Promise<StorePlanDto> {
    return StorePlanDto.from(await this.load(id));
  }

  async update(id: number, input: UpdateStorePlanDto, actor: Actor): Promise<StorePlanDto> {
    if (!Object.values(input).some((v) => v !== undefined)) throw AppError.field('body', 'Give at least one field to change');
    const saved = await this.saveUnique(async (manager) => {
      const plan = await this.plans.lockPlan(id, manager);
      if (!plan) throw AppError.notFound('Store plan');
      const before = StorePlanDto.from(plan);
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
      const after = await this.plans.savePlan(plan, manager);
      after.product = product;
      await this.record(manager, 'store_plan.updated', after, actor, { changes: changesOf(before, StorePlanDto.from(after)) });
      return after;
    });
    return StorePlanDto.from(saved);
  }

  async remove(id: number, actor: Actor): Promise<void> {
    await this.events.transaction(async (manager) => {
      const plan = await this.plans.lockPlan(id, manager);
      if (!plan || !(await this.plans.deletePlan(id, manager))) throw AppError.notFound('Store plan');
      await this.record(manager, 'store_plan.deleted', plan, actor);
    });
  }

  private record(
    manager: EntityManager,
    type: 'store_plan.created' | 'store_plan.updated' | 'store_plan.deleted',
    plan: StorePlan,
    actor: Actor,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const dto = StorePlanDto.from(plan);
    return this.events.record(manager, {
      type,
      actor,
      productId: plan.productId,
      productCode: plan.product?.code,
      details: {
        plan_id: plan.id,
        store: plan.store,
        price_id: plan.priceId,
        license_type: dto.license_type,
        on_end: dto.on_end,
        ...extra,
      },
    });
  }

  private async load(id: number): Promise<StorePlan> {
    const plan = await this.plans.getPlan(id);
    if (!plan) throw AppError.notFound('Store plan');
    return plan;
  }

  /** Runs `save` in a transaction; the unique price index's violation becomes a 409 naming price_id. */
  private async saveUnique(save: (manager: EntityManager) => Promise<StorePlan>): Promise<StorePlan> {
    try {
      return await this.events.transaction(save);
    } catch (err) {
      if (uniqueViolation(err) === STORE_PLAN_PRICE_INDEX)
        throw AppError.conflict('The store has a plan for this price already', { field: 'price_id' });
      throw err;
    }
  }
}

/** The fields an update changed, before and after (created_at and updated_at aside). */
function changesOf(before: StorePlanDto, after: StorePlanDto): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const key of Object.keys(after) as (keyof StorePlanDto)[]) {
    if (key === 'created_at' || key === 'updated_at') continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) changes[key] = { from: before[key], to: after[key] };
  }
  return changes;
}

function checkFeatures(features: string[] | undefined, product: Product): void {
  const message = features ? unofferedFeaturesMessage(features, product) : undefined;
  if (message) throw AppError.field('features', message);
}
