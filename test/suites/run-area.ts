import { readdirSync } from 'node:fs';
import { join } from 'node:path';

// The area lists are plain CommonJS so jest.config.js can read them too.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const areas = require('./areas.js') as Record<string, string[]>;

const testDir = join(__dirname, '..');

/** The test files of a folder with this suffix, by name without the suffix. */
function filesEndingIn(dir: string, suffix: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith(suffix))
    .map((file) => file.slice(0, -suffix.length))
    .sort();
}

/**
 * Runs a group's test files in this one Jest test file (docs/testing.md, Suites that start once): the app's code loads
 * once for all of them, and each file is required inside a describe block of its own, so its top-level hooks, its app
 * and its database belong to that block and end with it, before the next file starts.
 */
export function runGroup(groups: Record<string, string[]>, group: string, dir: string, suffix: string): void {
  const files = groups[group];
  if (!files) throw new Error(`unknown suite "${group}" for ${suffix} files`);
  for (const name of files) {
    describe(`${name}${suffix}`, () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(join(dir, `${name}${suffix}`));
    });
  }
  // A member may set Jest's timeout for its own tests (jest.setTimeout is one value per test file): the suite keeps the
  // longest any member asks for, a hang guard for all of them, never shorter than any member's own.
  jest.setTimeout(120_000);
}

/** The check that no file is left out of its suites, or run twice, and that each suite has its file. */
export function checkGroups(
  groups: Record<string, string[]>,
  files: { dir: string; suffix: string },
  suites: { dir: string; suffix: string },
): void {
  describe(`the ${files.suffix} suites`, () => {
    it(`hold every ${files.suffix} file exactly once`, () => {
      expect(Object.values(groups).flat().sort()).toEqual(filesEndingIn(files.dir, files.suffix));
    });

    it('each has a suite file that runs it', () => {
      expect(filesEndingIn(suites.dir, suites.suffix)).toEqual(Object.keys(groups).sort());
    });
  });
}

/** Runs one e2e area of test/suites/areas.js. */
export function runArea(area: string): void {
  runGroup(areas, area, testDir, '.e2e-spec.ts');
}

/** The check that no e2e file is left out of `npm test`, or run twice. */
export function checkAreas(): void {
  checkGroups(areas, { dir: testDir, suffix: '.e2e-spec.ts' }, { dir: __dirname, suffix: '.e2e-suite.ts' });
}
