import { join } from 'node:path';
import { checkGroups, runGroup } from '../suites/run-area';

// Plain CommonJS, like the e2e areas, so the platform suite's check can read it too.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const suites = require('./suites.js') as Record<string, string[]>;

/** Runs one browser suite of test/browser/suites.js. */
export function runBrowserSuite(name: string): void {
  runGroup(suites, name, __dirname, '.browser-spec.ts');
}

/** The check that every browser file runs in exactly one suite. */
export function checkBrowserSuites(): void {
  checkGroups(suites, { dir: __dirname, suffix: '.browser-spec.ts' }, { dir: join(__dirname, 'suites'), suffix: '.browser-suite.ts' });
}
