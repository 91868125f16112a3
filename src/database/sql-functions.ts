import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `license_status.v1`: a database function's name and the version of its definition. */
export type SqlFunctionVersion = `${string}.v${number}`;

/**
 * The statement that defines one version of a database function, read from `src/database/sql/<name>.v<N>.sql`
 * (docs/architecture.md, Database functions): migrations load these files instead of spelling the SQL, so the live
 * version of a function is the file with its highest N. A file is never changed once a migration has loaded it.
 */
export function sqlFunction(version: SqlFunctionVersion): string {
  if (!/^[a-z][a-z0-9_]*\.v[1-9]\d*$/.test(version)) throw new Error(`Not a database function version: ${version}`);
  return readFileSync(join(__dirname, 'sql', `${version}.sql`), 'utf8');
}
