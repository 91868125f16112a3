import { Check, Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

import type { PolicyOverrides } from '../licenses/license-policy';

@Entity('products')
@Check('products_default_policy_check', `jsonb_typeof(default_policy) = 'object'`)
export class Product {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 32 })
  code: string;

  @Column({ type: 'varchar', length: 200 })
  name: string;

  @Column({ name: 'key_prefix', type: 'varchar', length: 8 })
  keyPrefix: string;

  @Column({ name: 'default_limits', type: 'jsonb', default: {} })
  defaultLimits: Record<string, number>;

  /** Seat policy of its licences unless a licence overrides a key (CONTRACT 9). */
  @Column({ name: 'default_policy', type: 'jsonb', default: {} })
  defaultPolicy: PolicyOverrides;

  @Column({ name: 'available_features', type: 'jsonb', default: [] })
  availableFeatures: string[];

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
