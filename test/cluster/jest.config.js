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
  maxWorkers: 1,
  testTimeout: 180000,
};
