import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import type { StaffRole } from '../../staff/roles';

/** Who may use a dashboard route: anyone (no session), or a signed-in account of this role or above. */
export type RouteAccess = 'anyone' | StaffRole;

/**
 * Signing in, its second step, passkeys and single sign-on, and accepting an invitation: no session needed
 * (docs/dashboard.md, Second factors; Single sign-on).
 */
const SIGN_IN_ROUTES = [
  'GET /login',
  'POST /login',
  'GET /staff/invite/:token',
  'POST /staff/invite/:token',
  'GET /login/verify',
  'POST /login/verify',
  'POST /login/passkey/options',
  'POST /login/passkey',
  'GET /login/sso',
  'GET /login/sso/callback',
];

/** Every account keeps its own second factors (docs/dashboard.md, Second factors). */
const ACCOUNT_SECURITY_ROUTES = [
  'GET /account/security',
  'POST /account/security/totp',
  'GET /account/security/totp.png',
  'POST /account/security/totp/confirm',
  'POST /account/security/passkeys/options',
  'POST /account/security/passkeys',
  'POST /account/security/totp/remove',
  'POST /account/security/passkeys/:id/remove',
  'POST /account/security/recovery-codes',
];

/** Proving oneself again before a sensitive action (docs/security.md, Sudo mode). */
const SUDO_PAGE_ROUTES = [
  'GET /account/sudo',
  'POST /account/sudo',
  'POST /account/sudo/passkey/options',
  'POST /account/sudo/passkey',
  'POST /account/sudo/sso',
];

/** Any other path under a dashboard page: its HTML 404 (not-found.controller.ts), for any signed-in account. */
const CATCH_ALL_ROUTES = [
  'ALL /dashboard/*rest',
  'ALL /licenses/*rest',
  'ALL /audit/*rest',
  'ALL /signing-keys/*rest',
  'ALL /logout/*rest',
];

/** Staff accounts, roles and security settings: owner. */
const STAFF_ROUTES = [
  'GET /staff',
  'POST /staff/invites',
  'POST /staff/:id/access',
  'POST /staff/:id/disable',
  'POST /staff/:id/enable',
  'POST /staff/:id/reset-second-factors',
  'GET /staff/:id/confirm/:action',
  'POST /staff/invites/:id/revoke',
  'POST /staff/invites/:id/resend',
];

const ruled = (access: RouteAccess, keys: readonly string[]) => Object.fromEntries(keys.map((key) => [key, access]));

const posts = (keys: readonly string[]) => keys.filter((key) => key.startsWith('POST '));

/**
 * Every dashboard route and the least role that may use it (docs/dashboard.md, Staff and roles). The role guard refuses
 * a route missing here (403), and test/dashboard-roles.e2e-spec.ts walks every route Nest registered and fails on one
 * without a rule, so a new page cannot ship open. Keys are `METHOD /path` as the controllers declare them.
 */
export const ROUTE_RULES: Readonly<Record<string, RouteAccess>> = {
  ...ruled('anyone', SIGN_IN_ROUTES),
  ...ruled('viewer', ACCOUNT_SECURITY_ROUTES),
  ...ruled('viewer', SUDO_PAGE_ROUTES),

  // See licences, customers, audit, statistics, stores, mail: every role.
  'GET /': 'viewer',
  'POST /logout': 'viewer',
  'GET /dashboard': 'viewer',
  'GET /licenses': 'viewer',
  'GET /licenses/search': 'viewer',
  'GET /licenses/search/suggest': 'viewer',
  'GET /licenses/customer': 'viewer',
  'GET /licenses/refused': 'viewer',
  'GET /licenses/:id': 'viewer',
  'GET /licenses/bulk': 'viewer',
  'GET /licenses/bulk/:id': 'viewer',
  'GET /licenses/bulk/:id/progress': 'viewer',
  'GET /audit': 'viewer',
  'GET /products': 'viewer',
  'GET /emails': 'viewer',
  'GET /emails/preview/:kind': 'viewer',
  'GET /emails/preview/:kind/html': 'viewer',
  'GET /stores': 'viewer',
  ...ruled('viewer', CATCH_ALL_ROUTES),

  // Create, edit, renew, extend, suspend, reinstate, release seats, resend mail, notes, bulk changes and exports: support.
  'GET /licenses/new': 'support',
  'POST /licenses': 'support',
  'GET /licenses/:id/edit': 'support',
  'POST /licenses/:id/edit': 'support',
  'POST /licenses/:id/renew': 'support',
  'POST /licenses/:id/send-key': 'support',
  'GET /licenses/:id/confirm/:action': 'support',
  'POST /licenses/:id/release': 'support',
  'POST /licenses/:id/suspend': 'support',
  'POST /licenses/:id/reinstate': 'support',
  'POST /licenses/:id/license-file': 'support',
  'POST /licenses/:id/relay-pools': 'support',
  'POST /licenses/:id/relay-pools/:pool_id/end': 'support',
  'POST /licenses/customer/notes': 'support',
  'GET /licenses/export.csv': 'support',
  'GET /audit/export.csv': 'support',
  'POST /licenses/bulk/confirm': 'support',
  'POST /licenses/bulk': 'support',
  'GET /licenses/bulk/last/undo': 'support',
  'GET /licenses/bulk/:id/undo': 'support',
  'POST /licenses/bulk/:id/undo': 'support',
  'POST /licenses/views': 'support',
  'POST /licenses/views/:id/delete': 'support',
  'GET /offline-activation': 'support',
  'POST /offline-activation/preview': 'support',
  'POST /offline-activation': 'support',
  'GET /offline-activation/done': 'support',
  'GET /offline-activation/done/file': 'support',
  'POST /emails/:id/retry': 'support',

  // Revoke, products, store plans and replays, webhooks, admin tokens, signing keys: admin.
  'POST /licenses/:id/revoke': 'admin',
  'POST /products/:id/trial': 'admin',
  'POST /stores/plans': 'admin',
  'GET /stores/plans/:id/edit': 'admin',
  'POST /stores/plans/:id': 'admin',
  'GET /stores/plans/:id/delete': 'admin',
  'POST /stores/plans/:id/delete': 'admin',
  'POST /stores/events/:id/replay': 'admin',
  'GET /webhooks': 'admin',
  'POST /webhooks': 'admin',
  'GET /webhooks/:id': 'admin',
  'POST /webhooks/:id/deactivate': 'admin',
  'POST /webhooks/:id/activate': 'admin',
  'POST /webhooks/:id/rotate-secret': 'admin',
  'GET /webhooks/:id/delete': 'admin',
  'POST /webhooks/:id/delete': 'admin',
  'POST /webhooks/:id/deliveries/:deliveryId/retry': 'admin',
  'GET /tokens': 'admin',
  'POST /tokens': 'admin',
  'POST /tokens/:id/revoke': 'admin',
  'GET /signing-keys': 'admin',
  'GET /signing-keys/rotate': 'admin',
  'POST /signing-keys/rotate': 'admin',
  'GET /signing-keys/:keyId/revoke': 'admin',
  'POST /signing-keys/:keyId/revoke': 'admin',
  // Releases: admin, like the products they belong to (docs/dashboard.md, Staff and roles).
  'GET /products/:code/releases': 'admin',
  'POST /products/:code/releases': 'admin',
  'PUT /products/:code/releases/:id/artifacts/:filename': 'admin',
  'POST /products/:code/releases/:id/publish': 'admin',
  'POST /products/:code/releases/:id/yank': 'admin',
  'POST /products/:code/releases/:id/delete': 'admin',

  ...ruled('owner', STAFF_ROUTES),
};

/**
 * Sensitive actions (docs/security.md, Sudo mode): the account must have proved itself within STAFF_SUDO_MINUTES
 * (signed in, or re-authenticated on the confirm-access page), else it is sent there first. A session cookie alone
 * never adds a way to sign in or changes who may act.
 */
export const SUDO_ROUTES: ReadonlySet<string> = new Set([
  // Adding or removing a way to sign in, and changing who may act.
  ...posts(ACCOUNT_SECURITY_ROUTES),
  ...posts(STAFF_ROUTES),
  'POST /tokens',
  'POST /webhooks',
  'POST /webhooks/:id/deactivate',
  'POST /webhooks/:id/activate',
  'POST /webhooks/:id/rotate-secret',
  'POST /webhooks/:id/delete',
  'POST /signing-keys/rotate',
  'POST /signing-keys/:keyId/revoke',
]);

/**
 * The routes an account limited to products may use: each passes the account's products to the services, so another
 * product's licence is not found. Every other route covers all products and refuses such an account (403).
 */
export const PRODUCT_SCOPED_ROUTES: ReadonlySet<string> = new Set([
  // Signing in and an account's own second factors read no licence.
  ...SIGN_IN_ROUTES,
  ...ACCOUNT_SECURITY_ROUTES,
  ...SUDO_PAGE_ROUTES,
  'GET /',
  'POST /logout',
  'GET /dashboard',
  'GET /licenses',
  'GET /licenses/:id',
  // The top bar's search, its results as you type and a customer's page read only the account's products.
  'GET /licenses/search',
  'GET /licenses/search/suggest',
  'GET /licenses/customer',
  'GET /licenses/refused',
  'POST /licenses/customer/notes',
  'GET /licenses/new',
  'POST /licenses',
  'GET /licenses/:id/edit',
  'POST /licenses/:id/edit',
  'POST /licenses/:id/renew',
  'GET /licenses/:id/confirm/:action',
  'POST /licenses/:id/release',
  'POST /licenses/:id/suspend',
  'POST /licenses/:id/reinstate',
  'POST /licenses/:id/revoke',
  'GET /audit',
  ...CATCH_ALL_ROUTES,
]);

const joinPath = (prefix: string, path: string) =>
  `/${[prefix, path]
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;

/** The `METHOD /path` keys of a handler, from the metadata Nest routes it by (a handler may declare several paths). */
export function routeKeys(controller: object, handler: object): string[] {
  const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
  if (method === undefined) return [];
  const prefixes = [(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined) ?? ''].flat();
  const paths = [(Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined) ?? ''].flat();
  return prefixes.flatMap((prefix) => paths.map((path) => `${RequestMethod[method]} ${joinPath(prefix, path)}`));
}
