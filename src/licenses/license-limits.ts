export const DEFAULT_MAX_INSTALLATIONS = 1;

/** The licence's own limits over the product's defaults (docs/licences.md, Limits and features). */
export function mergeLimits(productDefaults: Record<string, number>, own: Record<string, number>): Record<string, number> {
  return { ...productDefaults, ...own };
}

/** How many machines may be bound at once. */
export function seatLimit(merged: Record<string, number>): number {
  const n = merged.max_installations;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : DEFAULT_MAX_INSTALLATIONS;
}
