import { buildLicensePayload } from '../../activation/license-payload';
import type { LicenseDetailsDto } from '../../licenses/dto/license.dto';
import { USABLE_STATUSES } from '../../licenses/license-status';
import type { KeyringService } from '../../keyring/keyring.service';
import type { SigningService } from '../../signing/signing.service';

export const PREVIEW_FINGERPRINT = 'sha256:<fingerprint of the activating machine>';

/**
 * The signed payload a client receives, built by the client API's own builder: signed for the most
 * recent seat when the licence is usable, otherwise unsigned with the machine left as a placeholder.
 */
export async function payloadPreview(license: LicenseDetailsDto, keyring: KeyringService, signing: SigningService) {
  const seat = license.activations[0];
  const key = keyring.activeKey();
  const payload = buildLicensePayload(
    {
      licenseKey: license.license_key,
      licenseType: license.license_type,
      createdAt: new Date(license.created_at),
      expiresAt: license.expires_at ? new Date(license.expires_at) : null,
      graceDays: license.grace_days,
      limits: license.limits, // already merged over the product's defaults
      policy: license.policy, // merged too
      features: license.features,
      customerName: license.customer_name,
      customerEmail: license.customer_email,
    },
    { code: license.product_code, defaultLimits: {} },
    seat
      ? { machineFingerprint: seat.machine_fingerprint, activatedAt: new Date(seat.activated_at) }
      : { machineFingerprint: PREVIEW_FINGERPRINT, activatedAt: new Date() },
    key.keyId,
    new Date(),
  );
  const signed = seat !== undefined && USABLE_STATUSES.includes(license.status);
  const document = signed ? { license: payload, signature: await signing.sign(payload, key.privateKey) } : { license: payload };
  return { signed, seat, json: JSON.stringify(document, null, 2) };
}
