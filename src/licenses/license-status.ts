/**
 * The derived licence status (docs/licences.md, Status and grace): `deriveLicenseStatus` in TypeScript, and the SQL
 * function `license_status()` (migration OneStatusRule) that every query filtering, sorting or counting by status
 * calls through `licenseStatusSql`. A property test (test/license-rules.property.e2e-spec.ts) checks they agree.
 * Grace days are 24 hours each, whatever the time zone.
 */
export const LICENSE_STATUSES = ['active', 'grace', 'expired', 'revoked', 'suspended'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];

export interface StatusFields {
  revoked: boolean;
  active: boolean;
  expiresAt: Date | null;
  graceDays: number;
}

/** A grace day: 24 hours, never a calendar day (docs/licences.md, Status and grace). */
export const GRACE_DAY_MS = 86_400_000;

/** The last instant an ISO 8601 timestamp can show with a four-digit year. */
const LAST_FOUR_DIGIT_YEAR_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** The rule's grace end, expires_at + grace_days x 24 h (SQL: license_grace_end), in ms; null when it never expires. */
function graceEndMs(license: Pick<StatusFields, 'expiresAt' | 'graceDays'>): number | null {
  return license.expiresAt ? license.expiresAt.getTime() + license.graceDays * GRACE_DAY_MS : null;
}

/** expires_at + grace_days for display, capped at the end of year 9999 (a licence expiring then has no later grace end to show). */
export function graceEndsAt(license: Pick<StatusFields, 'expiresAt' | 'graceDays'>): Date | null {
  const end = graceEndMs(license);
  return end === null ? null : new Date(Math.min(end, LAST_FOUR_DIGIT_YEAR_MS));
}

/** revoked > suspended > expired (now > expires_at + grace) > grace (now > expires_at) > active. */
export function deriveLicenseStatus(license: StatusFields, now: Date = new Date()): LicenseStatus {
  if (license.revoked) return 'revoked';
  if (!license.active) return 'suspended';
  const end = graceEndMs(license);
  if (license.expiresAt && end !== null) {
    const t = now.getTime();
    if (t > end) return 'expired';
    if (t > license.expiresAt.getTime()) return 'grace';
  }
  return 'active';
}

/** Statuses in which a licence may be activated and validates as valid. */
export const USABLE_STATUSES: readonly LicenseStatus[] = ['active', 'grace'];

/** Whether a licence in this status may be activated and validates as valid. */
export function isUsableStatus(status: LicenseStatus): boolean {
  return USABLE_STATUSES.includes(status);
}

/**
 * isUsableStatus in SQL: the `licenses` row aliased `alias` is usable at `now`. The flag conditions come first so the
 * planner can use them; license_status() decides.
 */
export function licenseUsableSql(alias: string, now = 'now()'): string {
  const statuses = USABLE_STATUSES.map((status) => `'${status}'`).join(', ');
  return `NOT ${alias}.revoked AND ${alias}.active AND ${licenseStatusSql(alias, now)} IN (${statuses})`;
}

/** The status of the `licenses` row aliased `alias` at `now` (an SQL expression: one query sees one "now"). */
export function licenseStatusSql(alias: string, now = 'now()'): string {
  const a = alias;
  return `license_status(${a}.revoked, ${a}.active, ${a}.expires_at, ${a}.grace_days, ${now})`;
}

/**
 * A WHERE condition selecting licences of one status: license_status() itself, after conditions it implies that
 * let the planner use the flag columns and the partial indexes on expires_at and license_grace_end().
 */
export function licenseStatusConditionSql(alias: string, status: LicenseStatus, now = 'now()'): string {
  const a = alias;
  const is = `${licenseStatusSql(a, now)} = '${status}'`;
  const usable = `NOT ${a}.revoked AND ${a}.active`;
  switch (status) {
    case 'revoked':
      return `${a}.revoked`;
    case 'suspended':
      return `NOT ${a}.revoked AND NOT ${a}.active`;
    case 'expired':
      return `${usable} AND ${a}.expires_at IS NOT NULL AND license_grace_end(${a}.expires_at, ${a}.grace_days) < ${now} AND ${is}`;
    case 'grace':
      return `${usable} AND ${a}.expires_at IS NOT NULL AND ${a}.expires_at < ${now} AND ${is}`;
    case 'active':
      return `${usable} AND ${is}`;
  }
}
