/**
 * Jest's test order: the longest first, so no worker sits idle while the other finishes a long file (docs/testing.md,
 * CI's budget). Jest's own order does that from the durations of the last run in its cache; a fresh clone (CI) has
 * none and falls back to the size of the test file, and a suite file (`test/suites/*.e2e-suite.ts`,
 * `test/browser/suites/*.browser-suite.ts`) is three lines whatever it runs. Here a suite weighs what its member
 * files weigh together.
 */
const { statSync } = require('node:fs');
const { basename, dirname, join } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const SUITES = [
  {
    suffix: '.e2e-suite.ts',
    lists: () => require('../suites/areas.js'),
    dir: (suite) => join(dirname(suite), '..'),
    member: '.e2e-spec.ts',
  },
  {
    suffix: '.browser-suite.ts',
    lists: () => require('../browser/suites.js'),
    dir: (suite) => join(dirname(suite), '..'),
    member: '.browser-spec.ts',
  },
];

const size = (path) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/** A test file's size, or for a suite the sizes of its member files together. */
function weight(path) {
  for (const kind of SUITES) {
    if (!path.endsWith(kind.suffix)) continue;
    const members = kind.lists()[basename(path, kind.suffix)] ?? [];
    return members.reduce((sum, name) => sum + size(join(kind.dir(path), `${name}${kind.member}`)), 0);
  }
  return size(path);
}

class LongestFirst extends Sequencer {
  sort(tests) {
    // With the last run's durations for every file, Jest's own order is the better guess.
    if (tests.every((test) => this.time(test) != null)) return super.sort(tests);
    const weights = new Map(tests.map((test) => [test.path, weight(test.path)]));
    return [...tests].sort((a, b) => weights.get(b.path) - weights.get(a.path));
  }
}

module.exports = LongestFirst;
