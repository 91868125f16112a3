import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { jsonTime, rowShape, type RowOf } from '../database/row-shape';
import { raw, runStatement, sql, type Sql } from '../database/statement';
import type { StoreName } from '../licenses/store-licenses/store-names';
import { Product } from '../products/product.entity';
import { StorePlan } from './store-plan.entity';

/** A store_plans row read into a StorePlan (timestamptz as Date, jsonb parsed), without its product. */
const PLAN_ROWS = rowShape(
  () => new StorePlan(),
  'id, store, price_id, product_id, license_type, limits, features, policy, grace_days, on_end, created_at, updated_at',
);

/** A product_catalog row as jsonb (every column of a product but update_policy, its times as text), read into a Product. */
const CATALOG_JSON = rowShape(
  () => new Product(),
  'id, code, name, key_prefix, default_limits, default_policy, available_features, active, trial, created_at, updated_at',
  { convert: { created_at: jsonTime, updated_at: jsonTime } },
);

/** A plan with its product, read through the products module's product_catalog view (docs/architecture.md). */
const PLAN_WITH_PRODUCT = `SELECT ${PLAN_ROWS.columnsOf('sp')}, to_jsonb(p) AS product
  FROM store_plans sp JOIN product_catalog p ON p.id = sp.product_id`;

/** A store_plans row, with the product_catalog row as jsonb where the statement joins it. */
type StorePlanRow = RowOf<typeof PLAN_ROWS> & { product?: RowOf<typeof CATALOG_JSON> };

function planFromRow(r: StorePlanRow): StorePlan {
  const plan = PLAN_ROWS.fromRow(r);
  if (r.product) plan.product = CATALOG_JSON.fromRow(r.product);
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
       RETURNING ${raw(PLAN_ROWS.columns)}`,
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
       WHERE id = ${p.id} RETURNING ${raw(PLAN_ROWS.columns)}`,
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
