import { readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { getMetadataArgsStorage } from 'typeorm';

type EntityClass = abstract new (...args: never[]) => unknown;

/** `<name>.entity.ts` or `<name>.entities.ts` (`.js` once built), anywhere under src/: where each module keeps its tables. */
export const ENTITY_FILE = /\.entit(y|ies)\.(ts|js)$/;

/**
 * Every `@Entity` class exported by an entity file under `root`, found at start like the migrations: database/ lists
 * no feature's tables, so features may use database/ without an import cycle (docs/architecture.md, Module boundaries).
 * Only files of this module's own extension (.ts under Jest, .js under `node dist/...`).
 */
export function loadEntities(root: string, extension = extname(__filename)): EntityClass[] {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((path) => ENTITY_FILE.test(path) && extname(path) === extension)
    .sort();
  return files.flatMap((path) => {
    // A directory load is dynamic by nature; require keeps it synchronous, so the options stay a plain value.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const exported = Object.values(require(join(root, path)) as Record<string, unknown>);
    // Read after the require: loading the file is what registers its @Entity classes.
    const tables = new Set(getMetadataArgsStorage().tables.map((table) => table.target));
    const entities = exported.filter((value): value is EntityClass => typeof value === 'function' && tables.has(value));
    if (!entities.length) throw new Error(`${join(root, path)} is named as an entity file but exports no @Entity class`);
    return entities;
  });
}
