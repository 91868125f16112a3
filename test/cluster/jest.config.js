/** `npm run test:cluster`: several real server processes against the local PostgreSQL and Redis. */
const base = require('../../jest.config.js');
const e2e = base.projects.find((p) => p.displayName === 'e2e');
module.exports = {
  transform: e2e.transform,
  transformIgnorePatterns: e2e.transformIgnorePatterns,
  moduleNameMapper: e2e.moduleNameMapper,
  testEnvironment: 'node',
  rootDir: '../..',
  testRegex: 'test/cluster/.*\\.cluster-spec\\.ts$',
  // Two files at a time: a file's servers wait on each other and on the network much of the time, so two keep both
  // cores busy where one left one idle (docs/testing.md, CI's budget).
  maxWorkers: 2,
  testTimeout: 180000,
};
