/** What an admin credential may do (docs/admin-api.md, Scopes); each admin route requires exactly one of these. */
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
  'stores:manage',
  'releases:manage',
] as const;
export type AdminScope = (typeof ADMIN_SCOPES)[number];

/** What each scope allows, in words, for the tokens page and the API docs (docs/admin-api.md, Scopes). */
export const SCOPE_DESCRIPTIONS: Readonly<Record<AdminScope, string>> = {
  'products:read': 'Read products, their features and default limits.',
  'products:write': 'Create and change products.',
  'licenses:read': 'Read, search and export licences and their machines.',
  'licenses:write': 'Create, change and revoke licences; release machines; activate offline.',
  'audit:read': 'Read and export the audit log.',
  'stats:read': 'Read the statistics.',
  'webhooks:manage': 'Create, change and delete webhook endpoints; retry deliveries.',
  'tokens:manage': 'Issue and revoke admin tokens (never beyond its own scopes and products).',
  'signing-keys:manage': 'Rotate and revoke signing keys (global: only for a token of every product).',
  'stores:manage': 'Manage store plans; read and replay store events (global: only for a token of every product).',
  'releases:manage': "Create, upload, publish, yank and delete releases of the token's products; read their download counts.",
};

/** The scopes as a Markdown list for OpenAPI descriptions (docs/admin-api.md, Scopes). */
export const SCOPE_LIST_MARKDOWN = ADMIN_SCOPES.map((scope) => `- \`${scope}\`: ${SCOPE_DESCRIPTIONS[scope]}`).join('\n');

/**
 * Scopes over things that belong to no product (the signing keys, the stores' plans and events): only a
 * credential for every product may hold or use them (docs/admin-api.md, Global scopes).
 */
export const GLOBAL_SCOPES: readonly AdminScope[] = ['signing-keys:manage', 'stores:manage'];
export const isGlobalScope = (scope: AdminScope): boolean => GLOBAL_SCOPES.includes(scope);

/**
 * The requirement of a route not yet given its own scope (the old `@AdminApi()`): only a credential that holds
 * every scope for every product (an API_KEY key, or a token with all scopes and no product list) passes.
 */
export const FULL_ACCESS = '*';
export type ScopeRequirement = AdminScope | typeof FULL_ACCESS;
