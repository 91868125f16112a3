/**
 * The e2e files, grouped into area suites (docs/testing.md, Suites that start once). Each suite is one Jest test file:
 * it loads the app's code once and runs its member files one after another, each in a describe block of its own (its
 * hooks, its app and its database stay its own). Every `test/*.e2e-spec.ts` belongs to exactly one area;
 * `test/suites/areas.spec.ts` fails on a file that belongs to none.
 */
module.exports = {
  'client-api': [
    'activation',
    'activation-concurrency',
    'envelopes',
    'license-files',
    'seat-policies',
    'signature',
    'signed-validate',
    'trials',
    'trials-by-ip',
    'usage',
    'verify-license',
  ],
  licences: [
    'exports',
    'keyset-paging',
    'license-creation',
    'license-rules.property',
    'licenses',
    'licenses-changes',
    'licenses-list',
    'licenses-status',
    'list-counts',
    'product-limits',
    'timestamps',
  ],
  'dashboard-licences': [
    'dashboard-bulk',
    'dashboard-charts',
    'dashboard-customer',
    'dashboard-license-files',
    'dashboard-pages',
    'dashboard-saved-views',
    'dashboard-search',
    'dashboard-support',
    'products-dashboard',
  ],
  'dashboard-admin': [
    'dashboard-signing-keys',
    'dashboard-tokens',
    'mail-dashboard',
    'releases-dashboard',
    'stores-dashboard',
    'webhooks-dashboard',
  ],
  staff: ['dashboard-auth', 'dashboard-roles', 'dashboard-setup', 'dashboard-staff', 'staff-second-factors', 'staff-sso'],
  events: ['event-spine', 'jobs', 'seat-sweep', 'webhook-secrets', 'webhooks'],
  mail: ['mail', 'mail-instances', 'mail-stores', 'portal'],
  stores: ['stores', 'stores-lemonsqueezy', 'stores-paddle', 'stores-seller'],
  'admin-api': ['admin-tokens', 'audit', 'keyring', 'products', 'releases', 'stats', 'stats-counters', 'stats-daily'],
  platform: [
    // First: nestjs-pino builds its logger once per module registry, so the first app's log destination is the one
    // every later app of the suite writes to, and this file reads the lines its own app logs.
    'request-log',
    'bodyless-admin-routes',
    'dto-text-limits',
    'foundation',
    'health-redis',
    'jest-timeouts',
    'metrics',
    'openapi',
    'ormconfig',
    'path-ids',
    'pg-pool',
    'rate-limit',
    'schema',
    'text-lengths',
  ],
};
