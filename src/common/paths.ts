import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The folder holding package.json, whether running from src/ (tests) or dist/src/ (built). */
export function projectRoot(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'views'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}
