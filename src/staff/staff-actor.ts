import type { Actor } from '../common/auth/actor';

/** A staff member's actions are attributed to `staff:<username>` (docs/dashboard.md, Staff and roles). */
export const staffActorName = (username: string) => `staff:${username}`;

/**
 * The audit actor of a staff visitor: `name` is `staff:<username>` once an account is known, the name as typed into a
 * sign-in form when nobody is (docs/dashboard.md, Staff and roles), or null.
 */
export const visitorActor = (name: string | null, ip: string | null) => ({ type: 'dashboard' as const, name, ip }) satisfies Actor;

/** The audit actor of something an account does itself (signing in, accepting its invitation). */
export const staffActor = (username: string, ip: string | null): Actor => visitorActor(staffActorName(username), ip);
