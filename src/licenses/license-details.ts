import type { Product } from '../products/product.entity';
import type { Actor } from '../common/auth/actor';
import type { DomainEvent, EventType } from '../events/event-recorder';
import { mergePolicy } from '../common/seat-policy/license-policy';
import type { Activation } from './seats/activation.entity';
import { ActivationDto } from './dto/activation.dto';
import type { LicenseDetailsDto } from './dto/license.dto';
import type { License } from './license.entity';
import { mergeLimits } from './license-limits';
import { deriveLicenseStatus, graceEndsAt } from './license-status';

/** The details view of a licence (docs/licences.md, Reading and listing). `license.product` must be loaded. */
export function toLicenseDetails(license: License, currentSeats: Activation[], now: Date): LicenseDetailsDto {
  const product = license.product as Product;
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: license.id,
    product: { code: product.code, name: product.name },
    product_code: product.code,
    license_key: license.licenseKey,
    license_type: license.licenseType,
    customer_name: license.customerName,
    customer_email: license.customerEmail,
    customer_pib: license.customerPib,
    limits: mergeLimits(product.defaultLimits, license.limits),
    limit_overrides: license.limits,
    features: license.features,
    policy: mergePolicy(product.defaultPolicy, license.policy),
    policy_overrides: license.policy,
    grace_days: license.graceDays,
    notes: license.notes,
    expires_at: iso(license.expiresAt),
    grace_ends_at: iso(graceEndsAt(license)),
    active: license.active,
    revoked: license.revoked,
    revoked_at: iso(license.revokedAt),
    revoke_reason: license.revokeReason,
    status: deriveLicenseStatus(license, now),
    created_at: license.createdAt.toISOString(),
    updated_at: license.updatedAt.toISOString(),
    converted_from: license.convertedFrom ?? null,
    activations: currentSeats.map((seat) => ActivationDto.from(seat)),
    store: license.storeName
      ? {
          name: license.storeName,
          customer_id: license.storeCustomerId ?? null,
          subscription_id: license.storeSubscriptionId ?? null,
          order_id: license.storeOrderId ?? null,
          subscription_active: Boolean(license.storeSubscriptionId) && !license.storeSubscriptionEndedAt,
        }
      : null,
  };
}

/**
 * The event of a change to one licence (docs/webhooks.md, Event catalogue): its licence and product, the licence as
 * the admin GET shows it after the change (with `seats` bound) and the change's own details.
 */
export function licenseEvent(
  type: EventType,
  actor: Actor,
  license: License,
  change: { seats: Activation[]; now: Date; details: Record<string, unknown> },
): DomainEvent {
  return {
    type,
    actor,
    licenseId: license.id,
    productId: license.productId,
    productCode: license.product?.code ?? null,
    license: toLicenseDetails(license, change.seats, change.now),
    details: change.details,
  };
}
