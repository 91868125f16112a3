import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';
import type { UpdatePolicy } from '../products/product.entity';
import { deriveLicenseStatus, StatusFields } from './license-status';
import { invalidKey, statusDenial } from './seat-decisions';

/** What entitlement reads of a release. */
export interface EntitlementRelease {
  publishedAt: Date | null;
  yankedAt: Date | null;
  requiredFeatures: readonly string[];
}

export type DownloadDecision<R> = { kind: 'deny'; error: AppError } | { kind: 'allow'; releases: R[] };

/** A link or feed file for a release the licence may not have (docs/releases.md, Entitlement). */
export const notEntitled = () => new AppError(ErrorCode.RELEASE_NOT_ENTITLED, 403, 'This licence may not download this release');

/**
 * docs/releases.md, Entitlement: which of `releases` (one product's) the licence may download at `now`. First failure
 * wins, as /activate orders them: INVALID_KEY > KEY_REVOKED > KEY_SUSPENDED > KEY_EXPIRED > NOT_ACTIVATED.
 * A usable (active, grace) licence may have every published, unyanked release whose required features it carries;
 * under `perpetual_fallback` an expired one keeps those published before its expires_at, and is refused KEY_EXPIRED
 * only when that leaves nothing. `machine`: whether the asking machine holds a seat; null when no machine asks (a
 * signed link, the portal).
 */
export function decideDownload<R extends EntitlementRelease>(
  license: (StatusFields & { features: readonly string[] }) | null,
  machine: { seatHeld: boolean } | null,
  updatePolicy: UpdatePolicy,
  releases: readonly R[],
  now: Date,
): DownloadDecision<R> {
  if (!license) return { kind: 'deny', error: invalidKey() };
  const status = deriveLicenseStatus(license, now);
  const features = new Set(license.features);
  const offered = releases.filter(
    (r) => r.publishedAt !== null && r.yankedAt === null && r.requiredFeatures.every((f) => features.has(f)),
  );
  let entitled = offered;
  const denial = statusDenial(status);
  if (denial) {
    const fallback = status === 'expired' && updatePolicy === 'perpetual_fallback' && license.expiresAt !== null;
    if (!fallback) return { kind: 'deny', error: denial };
    const expiry = (license.expiresAt as Date).getTime();
    entitled = offered.filter((r) => (r.publishedAt as Date).getTime() < expiry);
    if (entitled.length === 0) return { kind: 'deny', error: denial };
  }
  if (machine && !machine.seatHeld)
    return { kind: 'deny', error: new AppError(ErrorCode.NOT_ACTIVATED, 400, 'This machine holds no seat of the licence') };
  return { kind: 'allow', releases: entitled };
}
