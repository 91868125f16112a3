/**
 * The derived licence status (docs/licences.md, Status), the one place that defines it: in TypeScript for
 * single licences and as SQL for lists, filters and statistics. A spec checks they agree.
 */
export const LICENSE_STATUSES = ['active', 'grace', 'expired', 'revoked', 'suspended'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];

export interface StatusFields {
  revoked: boolean;
  active: boolean;
  expiresAt: Date | null;
  graceDays: number;
}

const DAY_MS = 86_400_000;

/** End of the grace period: expires_at + grace_days, or null for a licence that never expires. */
/** The last instant an ISO 8601 timestamp can show with a four-digit year. */
const LAST_FOUR_DIGIT_YEAR_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** expires_at + grace_days, capped at the end of year 9999 (a licence expiring then has no later grace end to show). */
export function graceEndsAt(license: Pick<StatusFields, 'expiresAt' | 'graceDays'>): Date | null {
  return license.expiresAt ? new Date(Math.min(license.expiresAt.getTime() + license.graceDays * DAY_MS, LAST_FOUR_DIGIT_YEAR_MS)) : null;
}

/** revoked > suspended > expired (now > expires_at + grace) > grace (now > expires_at) > active. */
export function deriveLicenseStatus(license: StatusFields, now: Date = new Date()): LicenseStatus {
  if (license.revoked) return 'revoked';
  if (!license.active) return 'suspended';
  if (license.expiresAt) {
    const t = now.getTime();
    if (t > (graceEndsAt(license) as Date).getTime()) return 'expired';
    if (t > license.expiresAt.getTime()) return 'grace';
  }
  return 'active';
}

/** Statuses in which a licence may be activated and validates as valid. */
export const USABLE_STATUSES: readonly LicenseStatus[] = ['active', 'grace'];

/**
 * The same rule as SQL over a `licenses` row aliased `alias`. `$now` is the parameter
 * placeholder for the reference time (so one query sees one consistent "now").
 */
export function licenseStatusSql(alias: string, now = 'now()'): string {
  const a = alias;
  return `(CASE
    WHEN ${a}.revoked THEN 'revoked'
    WHEN NOT ${a}.active THEN 'suspended'
    WHEN ${a}.expires_at IS NOT NULL AND ${now} > ${a}.expires_at + make_interval(days => ${a}.grace_days) THEN 'expired'
    WHEN ${a}.expires_at IS NOT NULL AND ${now} > ${a}.expires_at THEN 'grace'
    ELSE 'active' END)`;
}

/** A WHERE condition selecting licences of one status, written so indexes on the columns can help. */
export function licenseStatusConditionSql(alias: string, status: LicenseStatus, now = 'now()'): string {
  const a = alias;
  const usable = `NOT ${a}.revoked AND ${a}.active`;
  switch (status) {
    case 'revoked':
      return `${a}.revoked`;
    case 'suspended':
      return `NOT ${a}.revoked AND NOT ${a}.active`;
    case 'expired':
      return `${usable} AND ${a}.expires_at IS NOT NULL AND ${now} > ${a}.expires_at + make_interval(days => ${a}.grace_days)`;
    case 'grace':
      return `${usable} AND ${a}.expires_at IS NOT NULL AND ${now} > ${a}.expires_at AND ${now} <= ${a}.expires_at + make_interval(days => ${a}.grace_days)`;
    case 'active':
      return `${usable} AND (${a}.expires_at IS NULL OR ${now} <= ${a}.expires_at)`;
  }
}
