import { readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { MigrationInterface } from 'typeorm';

type MigrationClass = new () => MigrationInterface;

/** `<13-digit timestamp>-<name>.ts` (or `.js` once built): what `npm run migration:generate` and the TypeORM CLI write. */
export const MIGRATION_FILE = /^\d{13}-[\w-]+\.(ts|js)$/;

const isMigrationClass = (value: unknown): value is MigrationClass =>
  typeof value === 'function' && typeof (value.prototype as Partial<MigrationInterface> | undefined)?.up === 'function';

/**
 * Every migration in `dir`, in file-name (timestamp) order, loaded at start: a generated migration takes effect without
 * a hand-kept list (README.md, Migrations). Only files of this module's own extension: .ts under Jest, .js under
 * `node dist/...` and the TypeORM CLI. A file in the folder that exports no migration class is an error, not a skip.
 */
export function loadMigrations(dir: string, extension = extname(__filename)): MigrationClass[] {
  const files = readdirSync(dir)
    .filter((name) => MIGRATION_FILE.test(name) && extname(name) === extension)
    .sort();
  return files.map((name) => {
    // A directory load is dynamic by nature; require keeps it synchronous, so the options stay a plain value.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const exported = Object.values(require(join(dir, name)) as Record<string, unknown>).filter(isMigrationClass);
    if (exported.length !== 1) throw new Error(`${join(dir, name)} must export exactly one migration class, found ${exported.length}`);
    return exported[0];
  });
}
