import { Check, Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { Product } from '../products/product.entity';
import type { PolicyOverrides } from './license-policy';
import type { LicenseType } from './license-type';

@Entity('licenses')
@Check('licenses_policy_check', `jsonb_typeof(policy) = 'object'`)
export class License {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'product_id', type: 'int' })
  productId: number;

  @ManyToOne(() => Product, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'product_id' })
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

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @Column({ type: 'boolean', default: false })
  revoked: boolean;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'revoke_reason', type: 'varchar', length: 500, nullable: true })
  revokeReason: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /**
   * Folded customer name and e-mail, the key with and without dashes, and the PIB: what the search
   * matches. Kept by the licenses_search_text trigger, so the application never writes it.
   */
  @Column({ name: 'search_text', type: 'text', select: false, insert: false, update: false })
  searchText?: string;
}
