/**
 * Jest's test order: the longest first, so no worker sits idle while the other finishes a long file (docs/testing.md,
 * CI's budget). Jest's own order does that from the durations of the last run in its cache; a fresh clone (CI) has
 * none and falls back to the size of the test file, which orders the e2e suites nearly backwards: the events and mail
 * suites, short files that wait on sweeps, retries and 1,000 mails, are the longest, and they started last, leaving one
 * worker waiting out a 60 s sweep test alone at the end. So a fresh clone orders by the seconds each file took in a
 * recorded run (test/support/test-seconds.json, `node test/support/record-test-seconds.js <jest --json output>`); a
 * file that is not in it yet is estimated from its size (a suite from its member files' sizes).
 */
const { statSync } = require('node:fs');
const { basename, dirname, join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '..', '..');
const RECORDED = require('./test-seconds.json');
/** Seconds per KiB of test file for a file with no recorded time: the median of the e2e suites' recorded rates. */
const SECONDS_PER_KIB = 0.5;

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
function bytes(path) {
  for (const kind of SUITES) {
    if (!path.endsWith(kind.suffix)) continue;
    const members = kind.lists()[basename(path, kind.suffix)] ?? [];
    return members.reduce((sum, name) => sum + size(join(kind.dir(path), `${name}${kind.member}`)), 0);
  }
  return size(path);
}

/** The recorded seconds of a test file, else an estimate from its size. */
function seconds(path) {
  return RECORDED[relative(ROOT, path).split('\\').join('/')] ?? (bytes(path) / 1024) * SECONDS_PER_KIB;
}

class LongestFirst extends Sequencer {
  sort(tests) {
    // With the last run's durations for every file, Jest's own order is the better guess.
    if (tests.every((test) => this.time(test) != null)) return super.sort(tests);
    const weights = new Map(tests.map((test) => [test.path, seconds(test.path)]));
    return [...tests].sort((a, b) => weights.get(b.path) - weights.get(a.path));
  }
}

module.exports = LongestFirst;
