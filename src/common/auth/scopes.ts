/** What an admin credential may do (CONTRACT 12); each admin route requires exactly one of these. */
export const ADMIN_SCOPES = [
  'products:read',
  'products:write',
  'licenses:read',
  'licenses:write',
  'audit:read',
  'stats:read',
  'webhooks:manage',
  'tokens:manage',
  'signing-keys:manage',
] as const;
export type AdminScope = (typeof ADMIN_SCOPES)[number];

/**
 * Scopes over things that belong to no product (the signing keys; stores:manage joins when it exists): only a
 * credential for every product may hold or use them (docs/admin-api.md, Global scopes).
 */
export const GLOBAL_SCOPES: readonly AdminScope[] = ['signing-keys:manage'];
export const isGlobalScope = (scope: AdminScope): boolean => GLOBAL_SCOPES.includes(scope);

/**
 * The requirement of a route not yet given its own scope (the old `@AdminApi()`): only a credential that holds
 * every scope for every product (an API_KEY key, or a token with all scopes and no product list) passes.
 */
export const FULL_ACCESS = '*';
export type ScopeRequirement = AdminScope | typeof FULL_ACCESS;
