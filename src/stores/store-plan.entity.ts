import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { PolicyOverrides } from '../common/seat-policy/license-policy';
import type { LicenseType } from '../licenses/license-type';
import { Product } from '../products/product.entity';
import type { OnEndAction, StoreName } from '../licenses/store-licenses/store-names';

/** The unique index whose violation StorePlansService turns into a 409 naming price_id. */
export const STORE_PLAN_PRICE_INDEX = 'store_plans_store_price_key';

/** A store's price mapped to the licence it sells (docs/stores.md, Plans). Constraint names are the migration's. */
@Entity('store_plans')
@Index(STORE_PLAN_PRICE_INDEX, ['store', 'priceId'], { unique: true })
@Index('store_plans_product_idx', ['productId'])
@Check('store_plans_store_check', `store IN ('stripe', 'paddle', 'lemonsqueezy')`)
@Check('store_plans_license_type_check', `license_type IN ('TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY', 'PERPETUAL')`)
@Check('store_plans_limits_check', `jsonb_typeof(limits) = 'object'`)
@Check('store_plans_policy_check', `jsonb_typeof(policy) = 'object'`)
@Check('store_plans_grace_days_check', `grace_days BETWEEN 0 AND 365`)
@Check('store_plans_on_end_check', `on_end IN ('expire', 'suspend', 'revoke')`)
export class StorePlan {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'store_plans_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 16 })
  store: StoreName;

  @Column({ name: 'price_id', type: 'varchar', length: 255 })
  priceId: string;

  @Column({ name: 'product_id', type: 'int' })
  productId: number;

  @ManyToOne(() => Product, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'store_plans_product_id_fkey' })
  product?: Product;

  @Column({ name: 'license_type', type: 'varchar', length: 16 })
  licenseType: LicenseType;

  @Column({ type: 'jsonb', default: {} })
  limits: Record<string, number>;

  /** null: every feature the product offers. */
  @Column({ type: 'jsonb', nullable: true })
  features: string[] | null;

  @Column({ type: 'jsonb', default: {} })
  policy: PolicyOverrides;

  @Column({ name: 'grace_days', type: 'int', default: 7 })
  graceDays: number;

  @Column({ name: 'on_end', type: 'varchar', length: 8 })
  onEnd: OnEndAction;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
