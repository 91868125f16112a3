import type { LicenseDetailsDto } from '../licenses/dto/license.dto';
import { isUsableStatus } from '../licenses/license-status';
import type { LicensePayload, PayloadBinding, SignedLicense } from './license-payload';

export const PREVIEW_FINGERPRINT = 'sha256:<fingerprint of the activating machine>';

/** What a client receives for a licence, as the dashboard previews it (docs/dashboard.md). */
export interface LicensePreview {
  /** True when the licence is usable and has a seat: the document is signed for that seat, as /activate signs it. */
  signed: boolean;
  /** The most recent seat, when there is one. */
  seat: LicenseDetailsDto['activations'][number] | undefined;
  document: SignedLicense | { license: LicensePayload };
}

/**
 * The payload's inputs from a licence as the licences module shows it (limits and policy already merged over the
 * product's defaults): the most recent seat, or a placeholder machine when none is bound.
 */
export function previewInputs(license: LicenseDetailsDto) {
  const seat = license.activations[0];
  const binding: PayloadBinding = seat
    ? { machineFingerprint: seat.machine_fingerprint, activatedAt: new Date(seat.activated_at) }
    : { machineFingerprint: PREVIEW_FINGERPRINT, activatedAt: new Date() };
  return {
    seat,
    signed: seat !== undefined && isUsableStatus(license.status),
    binding,
    license: {
      licenseKey: license.license_key,
      licenseType: license.license_type,
      createdAt: new Date(license.created_at),
      expiresAt: license.expires_at ? new Date(license.expires_at) : null,
      graceDays: license.grace_days,
      limits: license.limits,
      policy: license.policy,
      features: license.features,
      customerName: license.customer_name,
      customerEmail: license.customer_email,
    },
    product: { code: license.product_code, defaultLimits: {} },
  };
}
