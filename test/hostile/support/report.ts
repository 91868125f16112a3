import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPORT_DIR = join(__dirname, '..', '..', '..', 'test-results', 'hostile');

/**
 * Prints a suite's numbers and keeps them in test-results/hostile/<name>.json, so docs/reliability.md
 * can quote the last run.
 */
export function report(name: string, numbers: Record<string, unknown>): void {
  mkdirSync(REPORT_DIR, { recursive: true });
  const stamped = { suite: name, finished_at: new Date().toISOString(), ...numbers };
  writeFileSync(join(REPORT_DIR, `${name}.json`), `${JSON.stringify(stamped, null, 2)}\n`);
  console.log(`[hostile:${name}] ${JSON.stringify(numbers)}`);
}

/** Count of each key. */
export function tally<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}
