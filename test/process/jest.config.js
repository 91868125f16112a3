/**
 * `npm run test:process`: the built server started as its own process from environment variables only and driven over
 * HTTP, one deployment per file (docs/testing.md, The process tier). The cluster suite's settings, one file at a time
 * (each file runs a server, and without TEST_DATABASE_URL its embedded PostgreSQL, beside Jest on a small machine).
 */
module.exports = {
  ...require('../cluster/jest.config.js'),
  testRegex: 'test/process/.*\\.process-spec\\.ts$',
  // One file at a time: CI runs this tier beside the client libraries (.ci/run), one server each.
  maxWorkers: 1,
  testTimeout: 60000,
};
