/**
 * The two spellings of a name: a field's camelCase in TypeScript, a column's and a response's snake_case
 * (docs/architecture.md, Database style; docs/admin-api.md, Conventions). Each is a type for the names a compiler
 * checks and a function for the names a program turns at run time.
 */

/** `keyPrefix` → `key_prefix`. */
export type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

/** `key_prefix` → `keyPrefix`. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/** `keyPrefix` → `key_prefix`. */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** `key_prefix` → `keyPrefix`. */
export const camelCase = (name: string): string => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
