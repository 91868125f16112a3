import type { LicenseType } from './license-type';

/** Adds calendar months in UTC, clamping to the last day of the target month (Jan 31 + 1 month = Feb 28/29). */
export function addUtcMonths(from: Date, months: number): Date {
  const d = new Date(from.getTime());
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d;
}

/** Expiry by licence type from the creation time (docs/licences.md, Licence types and expiry); PERPETUAL never expires. */
export function computeExpiresAt(type: LicenseType, from: Date): Date | null {
  switch (type) {
    case 'TRIAL':
      return new Date(from.getTime() + 14 * 86_400_000);
    case 'MONTHLY':
      return addUtcMonths(from, 1);
    case 'QUARTERLY':
      return addUtcMonths(from, 3);
    case 'YEARLY':
      return addUtcMonths(from, 12);
    case 'PERPETUAL':
      return null;
  }
}
