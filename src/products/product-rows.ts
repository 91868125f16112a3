import type { PolicyOverrides } from '../common/seat-policy/license-policy';
import { Product, type ProductTrial, type UpdatePolicy } from './product.entity';

/*
 * The products row as pg returns it, the column list that reads it and its one mapper (docs/architecture.md, Database
 * style), for ProductsRepository.
 */

export const PRODUCT_COLUMNS =
  'id, code, name, key_prefix, default_limits, default_policy, available_features, active, trial, update_policy, created_at, updated_at';

/** A products row (timestamptz as Date, jsonb parsed). */
export interface ProductRow {
  id: number;
  code: string;
  name: string;
  key_prefix: string;
  default_limits: Record<string, number>;
  default_policy: PolicyOverrides;
  available_features: string[];
  active: boolean;
  trial: ProductTrial | null;
  update_policy: UpdatePolicy;
  created_at: Date;
  updated_at: Date;
}

export function productFromRow(r: ProductRow): Product {
  return Object.assign(new Product(), {
    id: r.id,
    code: r.code,
    name: r.name,
    keyPrefix: r.key_prefix,
    defaultLimits: r.default_limits,
    defaultPolicy: r.default_policy,
    availableFeatures: r.available_features,
    active: r.active,
    trial: r.trial,
    updatePolicy: r.update_policy,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}
