import { plain, rowShape, type RowOf } from '../database/row-shape';
import { Product } from '../products/product.entity';
import type { LicenseListRow } from './dto/license.dto';
import { License } from './license.entity';
import { licenseStatusSql } from './license-status';

/*
 * The licences module's rows: their columns read into their targets (docs/architecture.md, Database style).
 * LicensesRepository and SeatsRepository read licences through these.
 */

/** Every licences column the application reads (search_text is the trigger's), as a License without its product. */
export const LICENSE_ROWS = rowShape(
  () => new License(),
  `id, product_id, license_key, license_type, customer_name, customer_email, customer_pib, limits, features, policy,
  grace_days, notes, expires_at, active, revoked, revoked_at, revoke_reason, created_at, updated_at, converted_from, store_name,
  store_customer_id, store_subscription_id, store_order_id, store_subscription_ended_at`,
);

/** A licenses row as pg returns it (timestamptz as Date, jsonb parsed). */
export type LicenseRow = RowOf<typeof LICENSE_ROWS>;

/** A product_catalog row as the licences module reads it: what a licence's product carries. */
export const CATALOG_ROWS = rowShape(
  () => new Product(),
  'id, code, name, key_prefix, default_limits, default_policy, available_features, active, created_at, updated_at',
);

export type ProductRow = RowOf<typeof CATALOG_ROWS>;

/** The licence's product, joined in with a `p_` prefix. */
const JOINED_PRODUCT = CATALOG_ROWS.prefixed('p_');

export const LICENSE_WITH_PRODUCT = `SELECT ${LICENSE_ROWS.columnsOf('l')}, ${JOINED_PRODUCT.columnsOf('p')}
  FROM licenses l JOIN product_catalog p ON p.id = l.product_id`;

export type LicenseWithProductRow = LicenseRow & RowOf<typeof JOINED_PRODUCT>;

/** A list row: some licence columns, the product's code and the status computed in SQL. */
export const LICENSE_LIST_ROWS = rowShape(
  plain<Omit<LicenseListRow, 'seatsUsed' | 'seatLimit' | 'customerPib'>>(),
  'id, product_code, license_key, license_type, customer_name, customer_email, expires_at, active, revoked, status, created_at',
  { expressions: { product_code: 'p.code', status: licenseStatusSql('l') } },
);

export type LicenseListDbRow = RowOf<typeof LICENSE_LIST_ROWS>;

export function licenseFromRow(r: LicenseWithProductRow): License {
  return Object.assign(LICENSE_ROWS.fromRow(r), { product: JOINED_PRODUCT.fromRow(r) });
}
