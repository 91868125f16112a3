// Module boundaries (docs/architecture.md, Module boundaries), checked by `npm run lint:deps` in CI. Folder-level
// cycles and the layer order are checked by scripts/check-boundaries.mjs from this cruise's JSON, since these rules
// see single files.

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'portal-not-dashboard',
      comment: 'The portal speaks to customers: it shares only src/html/ with the staff dashboard, never its files.',
      severity: 'error',
      from: { path: '^src/portal/' },
      to: { path: '^src/dashboard/' },
    },
    {
      name: 'dashboard-not-portal',
      comment: 'The dashboard speaks to staff: it shares only src/html/ with the customer portal, never its files.',
      severity: 'error',
      from: { path: '^src/dashboard/' },
      to: { path: '^src/portal/' },
    },
    {
      name: 'nothing-imports-a-door',
      comment: 'The dashboard and the portal are doors: only the composition root (files directly in src/, cluster/) mounts them.',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: '^src/(dashboard|portal|cluster)/' },
      to: { path: '^src/(dashboard|portal)/' },
    },
    {
      name: 'consumers-not-licences',
      comment: 'Webhooks and mail are consumers of the event spine: they read the event, never the licence files.',
      severity: 'error',
      from: { path: '^src/(webhooks|mail)/' },
      to: { path: '^src/licenses/' },
    },
    {
      name: 'events-knows-no-feature',
      comment: 'The event spine is infrastructure under every feature: it may use common/, config/, database/ and jobs/ only.',
      severity: 'error',
      from: { path: '^src/events/' },
      to: { path: '^src/', pathNot: '^src/(events|common|config|database|jobs)/' },
    },
    {
      name: 'audit-not-events',
      comment:
        'The audit log is a leaf the event spine writes into: if it imported the spine, a change to the recorder would reach the log it must outlive. The words both use (event types, actor types, the actor length) live in common/event-vocabulary.ts.',
      severity: 'error',
      from: { path: '^src/audit/' },
      to: { path: '^src/events/' },
    },
    {
      name: 'staff-not-dashboard',
      comment:
        'Staff authentication is one room (docs/architecture.md, Staff authentication): accounts, second factors, single sign-on and sign-in are services the dashboard calls, so src/staff/ imports nothing of the dashboard (its pages, session guard, cookies).',
      severity: 'error',
      from: { path: '^src/staff/' },
      to: { path: '^src/dashboard/' },
    },
    {
      name: 'sign-in-knows-no-http',
      comment:
        "The sign-in services take a visit (an address, the session state, how a session starts), never a request: Express, express-session and passport are the door's wiring.",
      severity: 'error',
      from: { path: '^src/staff/sign-in/' },
      to: {
        path: [
          '(^|/)node_modules/(@types/)?(express|express-session|passport|passport-local)/',
          '^(express|express-session|passport|passport-local)$',
        ],
      },
    },
    {
      name: 'html-knows-no-door',
      comment: 'src/html/ is shared by both doors, so it imports neither of them (nor any feature): forms, tokens, ids, times.',
      severity: 'error',
      from: { path: '^src/html/' },
      to: { path: '^src/', pathNot: '^src/(html|common|config)/' },
    },
    {
      name: 'root-is-not-imported',
      comment:
        'Files directly in src/ are the composition root; only cluster/ (which starts the processes) and cli/ (the licence-server command, which prepares the same runtime) may import them.',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: '^src/(cluster|cli)/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'signing-is-pure',
      comment: 'signing/ is pure crypto usable outside the server: no other src folder (docs/signing.md, Where the code lives).',
      severity: 'error',
      from: { path: '^src/signing/' },
      to: { path: '^src/', pathNot: '^src/signing/' },
    },
    {
      name: 'signing-no-framework',
      comment: 'signing/ uses no Nest, file system or TypeORM (docs/signing.md, Where the code lives).',
      severity: 'error',
      from: { path: '^src/signing/' },
      to: { path: ['^(node:)?fs(/promises)?$', '(^|/)node_modules/(@nestjs|typeorm)/', '^(@nestjs/|typeorm$)'] },
    },
    {
      name: 'common-knows-no-feature',
      comment: 'common/ is shared by every feature, so it imports none of them (nor the composition root); config/ it may read.',
      severity: 'error',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/(common|config)/' },
    },
    {
      name: 'repository-stays-home',
      comment: 'A repository is used only in its own folder: other modules (the dashboard, the portal) call its service.',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/.*\\.repository\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'licence-writes-are-use-cases',
      comment:
        'A licence changes only through its use cases (docs/architecture.md, Licence use cases): the steps they share (LicenseWriter) are theirs alone.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/licenses/(use-cases/|licenses\\.module\\.ts$)' },
      to: { path: '^src/licenses/use-cases/license-writer\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'use-cases-know-no-door',
      comment: 'Every door (admin API, dashboard, stores, bulk, portal) calls the licence use cases, so they import no controller.',
      severity: 'error',
      from: { path: '^src/licenses/use-cases/' },
      to: { path: ['\\.controller\\.ts$', '^src/(dashboard|portal|stores)/'] },
    },
    {
      name: 'no-file-cycle',
      comment: 'No import cycle between files that exists at run time (Nest would need forwardRef; load order would matter).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    // Specs may reach across folders to build fixtures; the rules are about the shipped code.
    exclude: { path: ['\\.spec\\.ts$', '^src/metadata\\.ts$'] },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
