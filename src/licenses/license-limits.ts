/**
 * The seat rules (docs/licences.md, Seat limit and dead seats): how many machines may be bound, and when a seat is
 * dead. The SQL functions license_seat_limit(), license_heartbeat_timeout() and seat_is_dead() (migration
 * OneStatusRule) are the same rules for queries; a property test checks they agree.
 */
export const DEFAULT_MAX_INSTALLATIONS = 1;

const MAX_SEAT_LIMIT = 2_147_483_647;

/** The licence's own limits over the product's defaults (docs/licences.md, Limits and features). */
export function mergeLimits(productDefaults: Record<string, number>, own: Record<string, number>): Record<string, number> {
  return { ...productDefaults, ...own };
}

/** How many machines may be bound at once: the merged max_installations when it is a whole number in range, else 1. */
export function seatLimit(merged: Record<string, unknown>): number {
  const n = merged.max_installations;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_SEAT_LIMIT ? n : DEFAULT_MAX_INSTALLATIONS;
}

/** A seat is dead when it was silent for longer than the licence's heartbeat timeout (null: seats never die). */
export function isSeatDead(lastSeenAt: Date, heartbeatTimeoutSeconds: number | null, now: Date): boolean {
  return heartbeatTimeoutSeconds !== null && lastSeenAt.getTime() < now.getTime() - heartbeatTimeoutSeconds * 1000;
}
