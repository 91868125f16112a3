import { rowShape, type RowOf } from '../database/row-shape';
import { Product } from './product.entity';

/** The products row read into a Product (docs/architecture.md, Database style), for ProductsRepository. */
export const PRODUCT_ROWS = rowShape(
  () => new Product(),
  'id, code, name, key_prefix, default_limits, default_policy, available_features, active, trial, update_policy, created_at, updated_at',
);

/** A products row (timestamptz as Date, jsonb parsed). */
export type ProductRow = RowOf<typeof PRODUCT_ROWS>;
