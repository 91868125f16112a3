import type { PolicyOverrides } from '../common/seat-policy/license-policy';
import { Product } from '../products/product.entity';
import type { ProductRow as CatalogRow } from '../products/product-rows';
import type { LicenseListRow } from './dto/license.dto';
import { License } from './license.entity';
import type { LicenseStatus } from './license-status';
import type { LicenseType } from './license-type';

/*
 * The licences module's rows as pg returns them, the column lists that read them, and the one mapper per row type
 * (docs/architecture.md, Database style): LicensesRepository and SeatsRepository read licences through these.
 */

/** Every licences column the application reads (search_text is the trigger's). */
export const LICENSE_COLUMNS = `id, product_id, license_key, license_type, customer_name, customer_email, customer_pib, limits, features, policy,
  grace_days, notes, expires_at, active, revoked, revoked_at, revoke_reason, created_at, updated_at, converted_from, store_name,
  store_customer_id, store_subscription_id, store_order_id, store_subscription_ended_at`;

export const LICENSE_WITH_PRODUCT = `SELECT l.id, l.product_id, l.license_key, l.license_type, l.customer_name, l.customer_email, l.customer_pib,
    l.limits, l.features, l.policy, l.grace_days, l.notes, l.expires_at, l.active, l.revoked, l.revoked_at, l.revoke_reason,
    l.created_at, l.updated_at, l.converted_from, l.store_name, l.store_customer_id, l.store_subscription_id, l.store_order_id,
    l.store_subscription_ended_at, p.code AS p_code, p.name AS p_name, p.key_prefix AS p_key_prefix,
    p.default_limits AS p_default_limits, p.default_policy AS p_default_policy, p.available_features AS p_available_features, p.active AS p_active,
    p.created_at AS p_created_at, p.updated_at AS p_updated_at
  FROM licenses l JOIN product_catalog p ON p.id = l.product_id`;

/** A licenses row as pg returns it (timestamptz as Date, jsonb parsed); search_text is never read. */
export interface LicenseRow {
  id: number;
  product_id: number;
  license_key: string;
  license_type: LicenseType;
  customer_name: string;
  customer_email: string | null;
  customer_pib: string | null;
  limits: Record<string, number>;
  features: string[];
  grace_days: number;
  notes: string | null;
  expires_at: Date | null;
  active: boolean;
  revoked: boolean;
  revoked_at: Date | null;
  revoke_reason: string | null;
  policy: PolicyOverrides;
  created_at: Date;
  updated_at: Date;
  converted_from: number | null;
  store_name?: string | null;
  store_customer_id?: string | null;
  store_subscription_id?: string | null;
  store_order_id?: string | null;
  store_subscription_ended_at?: Date | null;
}

/** A product_catalog row as pg returns it, as the licences module reads it. */
export type ProductRow = Omit<CatalogRow, 'trial' | 'update_policy'>;

/** The licence's product, joined in with a `p_` prefix (its id is the licence's product_id). */
interface JoinedProductColumns {
  p_code: string;
  p_name: string;
  p_key_prefix: string;
  p_default_limits: Record<string, number>;
  p_available_features: string[];
  p_default_policy: PolicyOverrides;
  p_active: boolean;
  p_created_at: Date;
  p_updated_at: Date;
}

export type LicenseWithProductRow = LicenseRow & JoinedProductColumns;

/** A list row: some licence columns, the product's code and the status computed in SQL. */
export type LicenseListDbRow = Pick<
  LicenseRow,
  'id' | 'license_key' | 'license_type' | 'customer_name' | 'customer_email' | 'expires_at' | 'active' | 'revoked' | 'created_at'
> & { product_code: string; status: LicenseStatus };

export function licenseListRowFromRow(r: LicenseListDbRow): LicenseListRow {
  return {
    id: r.id,
    productCode: r.product_code,
    licenseKey: r.license_key,
    licenseType: r.license_type,
    customerName: r.customer_name,
    customerEmail: r.customer_email,
    expiresAt: r.expires_at,
    active: r.active,
    revoked: r.revoked,
    status: r.status,
    createdAt: r.created_at,
  };
}

export function licenseFromRow(r: LicenseWithProductRow): License {
  const product = Object.assign(new Product(), {
    id: r.product_id,
    code: r.p_code,
    name: r.p_name,
    keyPrefix: r.p_key_prefix,
    defaultLimits: r.p_default_limits,
    defaultPolicy: r.p_default_policy,
    availableFeatures: r.p_available_features,
    active: r.p_active,
    createdAt: r.p_created_at,
    updatedAt: r.p_updated_at,
  });
  return Object.assign(licenseOnlyFromRow(r), { product });
}

/** A licences row as a License, without its product. */
export function licenseOnlyFromRow(r: LicenseRow): License {
  return Object.assign(new License(), {
    id: r.id,
    productId: r.product_id,
    licenseKey: r.license_key,
    licenseType: r.license_type,
    customerName: r.customer_name,
    customerEmail: r.customer_email,
    customerPib: r.customer_pib,
    limits: r.limits,
    features: r.features,
    policy: r.policy,
    graceDays: r.grace_days,
    notes: r.notes,
    expiresAt: r.expires_at,
    active: r.active,
    revoked: r.revoked,
    revokedAt: r.revoked_at,
    revokeReason: r.revoke_reason,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    convertedFrom: r.converted_from ?? null,
    storeName: r.store_name ?? null,
    storeCustomerId: r.store_customer_id ?? null,
    storeSubscriptionId: r.store_subscription_id ?? null,
    storeOrderId: r.store_order_id ?? null,
    storeSubscriptionEndedAt: r.store_subscription_ended_at ?? null,
  });
}
