import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import { ParentRow } from '../common/parent-row';
import { Product } from '../products/product.entity';
import type { PolicyOverrides } from '../common/seat-policy/license-policy';
import type { LicenseType } from './license-type';

/** The unique index on license_key: LicensesService retries key generation when it is violated. */
export const LICENSE_KEY_INDEX = 'licenses_license_key_key';

/**
 * Constraint names are the ones the migrations create (test/schema.e2e-spec.ts keeps the two equal). TypeORM's @Index
 * cannot say DESC, INCLUDE, an operator class or an expression: the migrations hold those details, and the indexes built
 * on an expression (or on an optional extension) are declared with `synchronize: false` so a schema diff leaves them alone.
 */
@Entity('licenses')
@Index(LICENSE_KEY_INDEX, ['licenseKey'], { unique: true })
@Index('licenses_created_idx', ['createdAt', 'id']) // (created_at DESC, id DESC)
@Index('licenses_product_created_idx', ['productId', 'createdAt', 'id']) // (product_id, created_at DESC, id DESC)
@Index('licenses_converted_from_idx', ['convertedFrom'], { where: 'converted_from IS NOT NULL' })
@Index('licenses_type_created_idx', ['licenseType', 'createdAt', 'id']) // (license_type, created_at DESC, id DESC)
@Index('licenses_expires_idx', ['expiresAt'])
// (expires_at) INCLUDE (product_id): the statistics read today's expiries from the index alone.
@Index('licenses_usable_expires_idx', ['expiresAt', 'productId'], { where: 'NOT revoked AND active AND expires_at IS NOT NULL' })
// (license_grace_end(expires_at, grace_days)) INCLUDE (product_id, expires_at, grace_days) WHERE NOT revoked AND active AND expires_at IS NOT NULL
@Index('licenses_usable_grace_end_idx', { synchronize: false })
// USING gin (search_text gin_trgm_ops), only where the pg_trgm extension can be created.
@Index('licenses_search_trgm_idx', { synchronize: false })
// What activations_license_product_fkey refers to: a seat's product is its licence's.
@Unique('licenses_id_product_key', ['id', 'productId'])
@Check('licenses_license_type_check', `license_type IN ('TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY', 'PERPETUAL')`)
@Check('licenses_limits_check', `jsonb_typeof(limits) = 'object'`)
@Check('licenses_features_check', `jsonb_typeof(features) = 'array'`)
@Check('licenses_grace_days_check', `grace_days BETWEEN 0 AND 365`)
@Check('licenses_policy_check', `jsonb_typeof(policy) = 'object'`)
@Check('licenses_store_name_check', `store_name IN ('stripe', 'paddle', 'lemonsqueezy')`)
// One licence per store subscription (docs/stores.md, What each event does).
@Index('licenses_store_subscription_key', ['storeName', 'storeSubscriptionId'], {
  unique: true,
  where: 'store_subscription_id IS NOT NULL',
})
// The licence of a store order: found when the store sends the order and its subscription as two events.
@Index('licenses_store_order_idx', ['storeName', 'storeOrderId'], { where: 'store_order_id IS NOT NULL' })
export class License {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'licenses_pkey' })
  id: number;

  @Column({ name: 'product_id', type: 'int' })
  productId: number;

  @ManyToOne(() => Product, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'product_id', foreignKeyConstraintName: 'licenses_product_id_fkey' })
  product?: Product;

  @Column({ name: 'license_key', type: 'varchar', length: 64 })
  licenseKey: string;

  @Column({ name: 'license_type', type: 'varchar', length: 16 })
  licenseType: LicenseType;

  @Column({ name: 'customer_name', type: 'varchar', length: 200 })
  customerName: string;

  @Column({ name: 'customer_email', type: 'varchar', length: 254, nullable: true })
  customerEmail: string | null;

  @Column({ name: 'customer_pib', type: 'varchar', length: 9, nullable: true })
  customerPib: string | null;

  /** The licence's own limit overrides; product defaults apply beneath (see mergeLimits). */
  @Column({ type: 'jsonb', default: {} })
  limits: Record<string, number>;

  @Column({ type: 'jsonb', default: [] })
  features: string[];

  /** The licence's own seat-policy overrides; the product's default_policy applies beneath (see mergePolicy). */
  @Column({ type: 'jsonb', default: {} })
  policy: PolicyOverrides;

  @Column({ name: 'grace_days', type: 'int', default: 7 })
  graceDays: number;

  @Column({ type: 'text', nullable: true })
  notes: string | null;

  @TimestampColumn('expires_at', { nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @Column({ type: 'boolean', default: false })
  revoked: boolean;

  @TimestampColumn('revoked_at', { nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'revoke_reason', type: 'varchar', length: 500, nullable: true })
  revokeReason: string | null;

  /** The store that made the licence (docs/stores.md); null for a licence made by staff. */
  @Column({ name: 'store_name', type: 'varchar', length: 16, nullable: true })
  storeName?: string | null;

  @Column({ name: 'store_customer_id', type: 'varchar', length: 255, nullable: true })
  storeCustomerId?: string | null;

  @Column({ name: 'store_subscription_id', type: 'varchar', length: 255, nullable: true })
  storeSubscriptionId?: string | null;

  /** The first order (the purchase's invoice or checkout session). */
  @Column({ name: 'store_order_id', type: 'varchar', length: 255, nullable: true })
  storeOrderId?: string | null;

  /** When the store subscription ended (its on_end applied); null while it is active and renews (docs/mail.md, Stores). */
  @TimestampColumn('store_subscription_ended_at', { nullable: true })
  storeSubscriptionEndedAt?: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** The trial this licence converts (docs/licences.md, Trials): the newest trial of its product for its e-mail. */
  @Column({ name: 'converted_from', type: 'int', nullable: true })
  convertedFrom: number | null;

  @ParentRow(() => License, 'converted_from', 'licenses_converted_from_fkey', 'NO ACTION')
  convertedFromLicense?: License;

  /**
   * Folded customer name and e-mail, the key with and without dashes, and the PIB: what the search
   * matches. Kept by the licenses_search_text trigger, so the application never writes it.
   */
  @Column({ name: 'search_text', type: 'text', select: false, insert: false, update: false })
  searchText?: string;
}
