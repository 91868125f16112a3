/**
 * Static checks of the source tree, run once in CI's lint stage (`npm run lint:static`), not inside every `npm test`
 * (docs/testing.md, Static checks): the import rules on good and broken trees (src/boundaries.spec.ts), the writes
 * the event recorder must see (src/events/recorded-writes.spec.ts) and the docs sections the code cites
 * (src/docs-citations.spec.ts).
 */
const root = require('../../jest.config.js');
const unit = root.projects.find((project) => project.displayName === 'unit');

module.exports = {
  ...unit,
  displayName: 'static',
  rootDir: '../..',
  testRegex: require('./specs.js'),
  testPathIgnorePatterns: ['/node_modules/'],
  maxWorkers: 2,
  testTimeout: root.testTimeout,
};
