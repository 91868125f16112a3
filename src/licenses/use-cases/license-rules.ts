import { AppError } from '../../common/errors/app-error';
import { parseIsoTimestamp } from '../../common/validation/iso-timestamp';
import type { Product } from '../../products/product.entity';
import type { License } from '../license.entity';
import { computeExpiresAt } from '../license-expiry';

/** What the change rules read of a licence (docs/dashboard.md, Bulk actions). */
export type LicenseState = Pick<License, 'licenseType' | 'expiresAt' | 'active' | 'revoked'>;

export const licenseState = (l: LicenseState): LicenseState => ({
  licenseType: l.licenseType,
  expiresAt: l.expiresAt,
  active: l.active,
  revoked: l.revoked,
});

/** A renewal counts from the current expiry while it is still ahead, else from now. */
export function renewalStart(expiresAt: Date | null, now: Date): Date {
  return expiresAt && expiresAt.getTime() > now.getTime() ? expiresAt : now;
}

/** How a renewal (one term of the licence's type) or an extension (whole days) moves an expiry. */
export type ExpiryMove = { renew: true } | { days: number };

export const REVOKED_NOT_SUSPENDED = 'A revoked licence cannot be suspended';

/**
 * The expiry a renewal or an extension gives the licence at `now`, counted from the later of now and its expiry (an
 * expired licence gets the whole term or the days from today); 409 CONFLICT for PERPETUAL and revoked licences. The
 * single Renew, the bulk changes and the bulk confirmation's preview all use it, so the preview shows what will happen.
 */
export function movedExpiry(license: LicenseState, move: ExpiryMove, now: Date): Date {
  const extend = 'days' in move;
  if (license.licenseType === 'PERPETUAL')
    throw AppError.conflict(`A PERPETUAL licence never expires: there is nothing to ${extend ? 'extend' : 'renew'}`);
  if (license.revoked) throw AppError.conflict(`A revoked licence cannot be ${extend ? 'extended' : 'renewed'}`);
  const start = renewalStart(license.expiresAt, now);
  return extend ? new Date(start.getTime() + move.days * 86_400_000) : (computeExpiresAt(license.licenseType, start) as Date);
}

const day = (d: Date | null) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC' : 'never');

/** Why an undo leaves a licence's expiry as it is: revoked, or its expiry is no longer what the operation left. */
export function expiryUndoRefusal(license: LicenseState, left: Date): string | null {
  if (license.revoked) return 'Revoked since the operation: left as it is';
  if (license.expiresAt?.getTime() !== left.getTime())
    return `Changed since the operation: it expires ${day(license.expiresAt)}, not ${day(left)} as the operation left it`;
  return null;
}

/** Why an undo of a suspension leaves the licence as it is: revoked, or already reinstated. */
export function suspendUndoRefusal(license: LicenseState): string | null {
  if (license.revoked) return 'Revoked since the operation: left as it is';
  if (license.active) return 'Reinstated since the operation: nothing to undo';
  return null;
}

/** The message for features the product does not offer, or undefined when all are offered (shared with the dashboard's forms). */
export function unofferedFeaturesMessage(features: string[], product: Pick<Product, 'code' | 'availableFeatures'>): string | undefined {
  const unknown = features.filter((f) => !product.availableFeatures.includes(f));
  if (unknown.length === 0) return undefined;
  return `features not offered by ${product.code}: ${unknown.join(', ')} (available: ${product.availableFeatures.join(', ') || 'none'})`;
}

/** The features when the product offers them all; 400 VALIDATION_ERROR on `features` otherwise. */
export function offeredFeatures(features: string[], product: Pick<Product, 'code' | 'availableFeatures'>): string[] {
  const message = unofferedFeaturesMessage(features, product);
  if (message) throw AppError.field('features', message);
  return features;
}

/** The creation rule for an explicit expiry: none for PERPETUAL, else in the future; undefined when it holds. */
export function initialExpiryMessage(type: string, given: string | undefined, now: Date): string | undefined {
  if (given === undefined) return undefined;
  if (type === 'PERPETUAL') return 'A PERPETUAL licence never expires: omit expires_at';
  const expiresAt = parseIsoTimestamp(given);
  if (expiresAt && expiresAt.getTime() <= now.getTime()) return 'expires_at must be in the future';
  return undefined;
}
