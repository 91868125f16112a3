import { readdirSync } from 'node:fs';
import { join } from 'node:path';

// The area lists are plain CommonJS so jest.config.js can read them too.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const areas = require('./areas.js') as Record<string, string[]>;

const testDir = join(__dirname, '..');

/** Every `test/*.e2e-spec.ts` file, by its name without the suffix. */
export function e2eFiles(): string[] {
  return readdirSync(testDir)
    .filter((file) => file.endsWith('.e2e-spec.ts'))
    .map((file) => file.slice(0, -'.e2e-spec.ts'.length))
    .sort();
}

/**
 * Runs an area's e2e files in this one Jest test file (docs/testing.md, Suites that start once): the app's code loads
 * once for all of them, and each file is required inside a describe block of its own, so its top-level hooks, its app
 * and its database belong to that block and end with it, before the next file starts.
 */
export function runArea(area: string): void {
  const files = areas[area];
  if (!files) throw new Error(`unknown e2e area "${area}" (test/suites/areas.js)`);
  for (const name of files) {
    describe(`${name}.e2e-spec.ts`, () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require(join(testDir, `${name}.e2e-spec.ts`));
    });
  }
  // A member may set Jest's timeout for its own tests (jest.setTimeout is one value per test file): the suite keeps the
  // longest any member asks for, a hang guard for all of them, never shorter than any member's own.
  jest.setTimeout(120_000);
}

/** The check that no e2e file is left out of `npm test`, or run twice. */
export function checkAreas(): void {
  describe('the e2e area suites (test/suites/areas.js)', () => {
    it('hold every test/*.e2e-spec.ts exactly once', () => {
      const listed = Object.values(areas).flat();
      expect([...listed].sort()).toEqual(e2eFiles());
    });

    it('each has a suite file that runs it', () => {
      const suites = readdirSync(__dirname)
        .filter((file) => file.endsWith('.e2e-suite.ts'))
        .map((file) => file.slice(0, -'.e2e-suite.ts'.length))
        .sort();
      expect(suites).toEqual(Object.keys(areas).sort());
    });
  });
}
