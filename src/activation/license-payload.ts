import type { License } from '../licenses/license.entity';
import type { SignedEnvelope } from '../signing/envelope';
import { mergeLimits } from '../licenses/license-limits';
import { mergePolicy, SeatPolicy } from '../common/seat-policy/license-policy';
import type { Product } from '../products/product.entity';

/** The signed `license` object (docs/client-api.md, The signed licence). Every member is inside the signed bytes. */
export interface LicensePayload {
  license_key: string;
  product: string;
  license_type: string;
  issued_at: string;
  expires_at: string | null;
  activated_at: string;
  machine_fingerprint: string;
  grace_days: number;
  limits: Record<string, number>;
  features: string[];
  customer: { name: string; email: string | null };
  key_id: string;
  /** Server time of this signature (docs/signing.md, What is signed): a client's clock earlier than the latest one it has seen was set back. */
  signed_at: string;
  /** The merged seat policy (docs/licences.md, Seat policies), so a client knows its heartbeat timeout offline. */
  policy: SeatPolicy;
}

/** What activation returns: the licence data and the signature over its canonical bytes; the envelope when asked for. */
export interface SignedLicense {
  license: LicensePayload;
  signature: string;
  envelope?: SignedEnvelope;
}

/** The machine a payload is issued to. */
export interface PayloadBinding {
  machineFingerprint: string;
  activatedAt: Date;
}

/**
 * Builds the `license` object of a signed payload. Pure, so the dashboard can preview a payload:
 * limits are merged over the product's defaults, issued_at is the licence's creation time.
 */
export function buildLicensePayload(
  license: Pick<
    License,
    'licenseKey' | 'licenseType' | 'createdAt' | 'expiresAt' | 'graceDays' | 'limits' | 'features' | 'customerName' | 'customerEmail'
  > &
    Partial<Pick<License, 'policy'>>,
  product: Pick<Product, 'code' | 'defaultLimits'> & Partial<Pick<Product, 'defaultPolicy'>>,
  binding: PayloadBinding,
  keyId: string,
  signedAt: Date,
): LicensePayload {
  return {
    license_key: license.licenseKey,
    product: product.code,
    license_type: license.licenseType,
    issued_at: license.createdAt.toISOString(),
    expires_at: license.expiresAt ? license.expiresAt.toISOString() : null,
    activated_at: binding.activatedAt.toISOString(),
    machine_fingerprint: binding.machineFingerprint,
    grace_days: license.graceDays,
    limits: mergeLimits(product.defaultLimits, license.limits),
    features: [...license.features],
    customer: { name: license.customerName, email: license.customerEmail ?? null },
    key_id: keyId,
    signed_at: signedAt.toISOString(),
    policy: mergePolicy(product.defaultPolicy, license.policy),
  };
}
