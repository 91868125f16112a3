import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { PolicyOverrides } from '../common/seat-policy/license-policy';
import { raw, runStatement, sql, type Sql } from '../database/statement';
import type { LicenseType } from '../licenses/license-type';
import type { OnEndAction, StoreName } from '../licenses/store-licenses/store-names';
import { Product } from '../products/product.entity';
import type { ProductRow } from '../products/product-rows';
import { StorePlan } from './store-plan.entity';

const PLAN_COLUMNS = 'id, store, price_id, product_id, license_type, limits, features, policy, grace_days, on_end, created_at, updated_at';

/** A plan with its product, read through the products module's product_catalog view (docs/architecture.md). */
const PLAN_WITH_PRODUCT = `SELECT sp.id, sp.store, sp.price_id, sp.product_id, sp.license_type, sp.limits, sp.features, sp.policy, sp.grace_days,
    sp.on_end, sp.created_at, sp.updated_at, to_jsonb(p) AS product
  FROM store_plans sp JOIN product_catalog p ON p.id = sp.product_id`;

/** A store_plans row (timestamptz as Date, jsonb parsed). */
interface StorePlanRow {
  id: number;
  store: StoreName;
  price_id: string;
  product_id: number;
  license_type: LicenseType;
  limits: Record<string, number>;
  features: string[] | null;
  policy: PolicyOverrides;
  grace_days: number;
  on_end: OnEndAction;
  created_at: Date;
  updated_at: Date;
  /** The product_catalog row as jsonb (its times as text). */
  product?: CatalogProductJson;
}

/** A product_catalog row as jsonb: every column of a product but update_policy, its times as text. */
type CatalogProductJson = Omit<ProductRow, 'update_policy' | 'created_at' | 'updated_at'> & { created_at: string; updated_at: string };

function planFromRow(r: StorePlanRow): StorePlan {
  const plan = Object.assign(new StorePlan(), {
    id: r.id,
    store: r.store,
    priceId: r.price_id,
    productId: r.product_id,
    licenseType: r.license_type,
    limits: r.limits,
    features: r.features,
    policy: r.policy,
    graceDays: r.grace_days,
    onEnd: r.on_end,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
  const p = r.product;
  if (p)
    plan.product = Object.assign(new Product(), {
      id: p.id,
      code: p.code,
      name: p.name,
      keyPrefix: p.key_prefix,
      defaultLimits: p.default_limits,
      defaultPolicy: p.default_policy,
      availableFeatures: p.available_features,
      active: p.active,
      trial: p.trial,
      createdAt: new Date(p.created_at),
      updatedAt: new Date(p.updated_at),
    });
  return plan;
}

/** What a new plan decides; the id and times are the table's. */
export type NewStorePlan = Omit<StorePlan, 'id' | 'product' | 'createdAt' | 'updatedAt'>;

/**
 * The store plans (store_plans): plain rows read and written by key, each with its product. Style: named SQL with
 * typed rows (docs/architecture.md, Database style). Each method takes the caller's transaction when it has one.
 */
@Injectable()
export class StorePlansRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insertPlan(plan: NewStorePlan, manager?: EntityManager): Promise<StorePlan> {
    const p = plan;
    const [inserted] = await this.plans(
      manager,
      'store-plans-insert',
      sql`INSERT INTO store_plans (store, price_id, product_id, license_type, limits, features, policy, grace_days, on_end)
       VALUES (${p.store}, ${p.priceId}, ${p.productId}, ${p.licenseType}, ${JSON.stringify(p.limits)}::jsonb, ${jsonOrNull(p.features)}::jsonb,
         ${JSON.stringify(p.policy)}::jsonb, ${p.graceDays}, ${p.onEnd})
       RETURNING ${raw(PLAN_COLUMNS)}`,
    );
    return inserted;
  }

  /** Writes every changeable column of a locked plan and stamps updated_at; returns it as stored, without its product. */
  async savePlan(plan: StorePlan, manager?: EntityManager): Promise<StorePlan> {
    const p = plan;
    const [saved] = await this.plans(
      manager,
      'store-plans-update',
      sql`UPDATE store_plans SET store = ${p.store}, price_id = ${p.priceId}, product_id = ${p.productId}, license_type = ${p.licenseType},
         limits = ${JSON.stringify(p.limits)}::jsonb, features = ${jsonOrNull(p.features)}::jsonb, policy = ${JSON.stringify(p.policy)}::jsonb,
         grace_days = ${p.graceDays}, on_end = ${p.onEnd}, updated_at = now()
       WHERE id = ${p.id} RETURNING ${raw(PLAN_COLUMNS)}`,
    );
    return saved;
  }

  async getPlan(id: number, manager?: EntityManager): Promise<StorePlan | null> {
    const [plan] = await this.plans(manager, 'store-plans-get', sql`${raw(PLAN_WITH_PRODUCT)} WHERE sp.id = ${id}`);
    return plan ?? null;
  }

  /** The plan, locked for the rest of the transaction (an update or delete and its audit entry), with its product. */
  async lockPlan(id: number, manager: EntityManager): Promise<StorePlan | null> {
    const [plan] = await this.plans(manager, 'store-plans-lock', sql`${raw(PLAN_WITH_PRODUCT)} WHERE sp.id = ${id} FOR UPDATE OF sp`);
    return plan ?? null;
  }

  async planForPrice(store: StoreName, priceId: string, manager?: EntityManager): Promise<StorePlan | null> {
    const [plan] = await this.plans(
      manager,
      'store-plans-for-price',
      sql`${raw(PLAN_WITH_PRODUCT)} WHERE sp.store = ${store} AND sp.price_id = ${priceId}`,
    );
    return plan ?? null;
  }

  listPlans(): Promise<StorePlan[]> {
    return this.plans(undefined, 'store-plans-list', sql`${raw(PLAN_WITH_PRODUCT)} ORDER BY sp.id`);
  }

  async deletePlan(id: number, manager?: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ id: number }>(
      manager ?? this.dataSource.manager,
      'store-plans-delete',
      sql`DELETE FROM store_plans WHERE id = ${id} RETURNING id`,
    );
    return rows.length > 0;
  }

  private async plans(manager: EntityManager | undefined, name: string, statement: Sql): Promise<StorePlan[]> {
    return (await runStatement<StorePlanRow>(manager ?? this.dataSource.manager, name, statement)).map(planFromRow);
  }
}

const jsonOrNull = (value: unknown): string | null => (value == null ? null : JSON.stringify(value));
