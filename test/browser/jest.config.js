/** `npm run test:browser`: the dashboard in a real Chromium (Debian's /usr/bin/chromium via playwright-core). */
const base = require('../../jest.config.js');
const namedFiles = process.argv.some((arg) => /\.browser-spec\.ts$/.test(arg));
const e2e = base.projects.find((p) => p.displayName === 'e2e');
module.exports = {
  transform: e2e.transform,
  transformIgnorePatterns: e2e.transformIgnorePatterns,
  moduleNameMapper: e2e.moduleNameMapper,
  testEnvironment: 'node',
  rootDir: '../..',
  // The suites (test/browser/suites.js); naming browser files on the command line runs just those, each on its own.
  testRegex: namedFiles ? 'test/browser/[^/]*\\.browser-spec\\.ts$' : 'test/browser/suites/.*\\.browser-suite\\.ts$',
  globalSetup: e2e.globalSetup,
  globalTeardown: e2e.globalTeardown,
  // Two workers, one Chromium each (docs/testing.md, The browser suite).
  maxWorkers: 2,
  testSequencer: base.testSequencer,
  testTimeout: 60000,
};
