import { STAFF_ROLES, type StaffRole } from '../roles';

/**
 * The role a single sign-on account gets (docs/dashboard.md, Single sign-on): OIDC_ROLE_CLAIM holds a role name or a
 * list of values; the most powerful known role wins, names we do not know are ignored, and without any known one
 * OIDC_DEFAULT_ROLE applies, else no access (null).
 */
export function roleFromClaim(claim: unknown, defaultRole?: StaffRole): StaffRole | null {
  const values = (Array.isArray(claim) ? claim : [claim]).filter((v): v is string => typeof v === 'string');
  const known = STAFF_ROLES.filter((role) => values.some((v) => v.trim().toLowerCase() === role));
  return known[0] ?? defaultRole ?? null;
}

/** A claim by name, also a dotted path into nested objects (Keycloak puts roles under realm_access.roles). */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(claims, name)) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (!value || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
