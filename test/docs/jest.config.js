/**
 * `npm run test:docs`: the runnable shell blocks of README.md and docs/ against a built server (docs/testing.md, Docs
 * that run). The process tier's settings; one file, one server.
 */
module.exports = {
  ...require('../process/jest.config.js'),
  testRegex: 'test/docs/.*\\.docs-spec\\.ts$',
};
