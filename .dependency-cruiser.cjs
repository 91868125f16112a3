// Module boundaries (docs/architecture.md, Module boundaries), checked by `npm run lint:deps` in CI. Folder-level
// cycles are found by scripts/check-boundaries.mjs from this cruise's JSON, since these rules see single files.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
