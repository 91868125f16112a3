import type { ExportValue } from '../common/http/export';
import type { LicenseType } from './license-type';

/** A row of the licence export as the database returns it. */
export interface LicenseExportRow {
  id: number;
  product_code: string;
  license_key: string;
  license_type: LicenseType;
  status: string;
  customer_name: string;
  customer_email: string | null;
  customer_pib: string | null;
  features: string[];
  limits: Record<string, number>;
  grace_days: number;
  expires_at: Date | null;
  active: boolean;
  revoked_at: Date | null;
  revoke_reason: string | null;
  notes: string | null;
  created_at: Date;
  updated_at: Date;
  store_name: string | null;
  store_customer_id: string | null;
  store_subscription_id: string | null;
  store_order_id: string | null;
}

export const LICENSE_EXPORT_COLUMNS = [
  'id',
  'product_code',
  'license_key',
  'license_type',
  'status',
  'customer_name',
  'customer_email',
  'customer_pib',
  'features',
  'limit_overrides',
  'grace_days',
  'expires_at',
  'active',
  'revoked_at',
  'revoke_reason',
  'notes',
  'created_at',
  'updated_at',
  'store_name',
  'store_customer_id',
  'store_subscription_id',
  'store_order_id',
] as const;

/** One export record: the licence's own fields (limit_overrides as stored, not merged with the product's). */
export function licenseExportRecord(r: LicenseExportRow): Record<(typeof LICENSE_EXPORT_COLUMNS)[number], ExportValue> {
  return {
    id: r.id,
    product_code: r.product_code,
    license_key: r.license_key,
    license_type: r.license_type,
    status: r.status,
    customer_name: r.customer_name,
    customer_email: r.customer_email,
    customer_pib: r.customer_pib,
    features: r.features,
    limit_overrides: r.limits,
    grace_days: r.grace_days,
    expires_at: r.expires_at,
    active: r.active,
    revoked_at: r.revoked_at,
    revoke_reason: r.revoke_reason,
    notes: r.notes,
    created_at: r.created_at,
    updated_at: r.updated_at,
    store_name: r.store_name,
    store_customer_id: r.store_customer_id,
    store_subscription_id: r.store_subscription_id,
    store_order_id: r.store_order_id,
  };
}
