import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

import type { PolicyOverrides } from '../common/seat-policy/license-policy';

/** A product's trial settings: how long, how many machines (default 1), which features (default all). */
export interface ProductTrial {
  days: number;
  max_installations?: number;
  features?: string[];
}

/** What an expired licence may still download (docs/releases.md, Perpetual fallback). */
export const UPDATE_POLICIES = ['current', 'perpetual_fallback'] as const;
export type UpdatePolicy = (typeof UPDATE_POLICIES)[number];

/** The unique indexes whose violation ProductsService turns into a 409 naming the field. */
export const PRODUCT_CODE_INDEX = 'products_code_key';
export const PRODUCT_KEY_PREFIX_INDEX = 'products_key_prefix_key';

/** Constraint names are the ones the migrations create (test/schema.e2e-spec.ts keeps the two equal). */
@Entity('products')
@Index(PRODUCT_CODE_INDEX, ['code'], { unique: true })
@Index(PRODUCT_KEY_PREFIX_INDEX, ['keyPrefix'], { unique: true })
@Check('products_code_check', `code ~ '^[A-Z][A-Z0-9_]{1,31}$'`)
@Check('products_key_prefix_check', `key_prefix ~ '^[A-Z0-9]{2,8}$'`)
@Check('products_default_limits_check', `jsonb_typeof(default_limits) = 'object'`)
@Check('products_available_features_check', `jsonb_typeof(available_features) = 'array'`)
@Check('products_default_policy_check', `jsonb_typeof(default_policy) = 'object'`)
@Check('products_update_policy_check', `update_policy IN ('current', 'perpetual_fallback')`)
@Check('products_trial_check', `trial IS NULL OR jsonb_typeof(trial) = 'object'`)
export class Product {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'products_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 32 })
  code: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'key_prefix', type: 'varchar', length: 8 })
  keyPrefix: string;

  @Column({ name: 'default_limits', type: 'jsonb', default: {} })
  defaultLimits: Record<string, number>;

  /** Seat policy of its licences unless a licence overrides a key (docs/licences.md, Seat policies). */
  @Column({ name: 'default_policy', type: 'jsonb', default: {} })
  defaultPolicy: PolicyOverrides;

  @Column({ name: 'available_features', type: 'jsonb', default: [] })
  availableFeatures: string[];

  @Column({ type: 'boolean', default: true })
  active: boolean;

  /** Self-service trials (docs/licences.md, Trials); null: none, the default. */
  @Column({ type: 'jsonb', nullable: true })
  trial: ProductTrial | null;

  /** docs/releases.md, Entitlement: `perpetual_fallback` lets an expired licence keep the releases published before its expiry. */
  @Column({ name: 'update_policy', type: 'varchar', length: 20, default: 'current' })
  updatePolicy: UpdatePolicy;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
