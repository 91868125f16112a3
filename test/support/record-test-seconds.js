/**
 * Writes test/support/test-seconds.json, the seconds each test file took, from the JSON report of a Jest run
 * (`npx jest --json --outputFile=/tmp/run.json`, the browser suite likewise): test/support/sequencer.js starts the
 * longest first from it on a fresh clone. Files of other runs already recorded are kept; rerun it when suites move.
 *
 *   node test/support/record-test-seconds.js /tmp/run.json [/tmp/browser.json ...]
 */
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const TARGET = join(__dirname, 'test-seconds.json');
const recorded = JSON.parse(readFileSync(TARGET, 'utf8'));
for (const report of process.argv.slice(2)) {
  for (const file of JSON.parse(readFileSync(report, 'utf8')).testResults) {
    recorded[relative(ROOT, file.name).split('\\').join('/')] = Math.round((file.endTime - file.startTime) / 100) / 10;
  }
}
const sorted = Object.fromEntries(Object.entries(recorded).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(TARGET, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`${Object.keys(sorted).length} files in ${relative(ROOT, TARGET)}`);
