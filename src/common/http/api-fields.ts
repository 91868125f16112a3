/**
 * An entity's fields as a response spells them (docs/admin-api.md, Conventions: snake_case names, timestamps as ISO
 * 8601 strings). A DTO's `from` lists the fields it copies and the timestamps it writes, and only says by hand what is
 * more than a copy (a computed status, a renamed field).
 */
import { SnakeCase, snakeCase } from '../names';

/** The fields of `T` that hold a timestamp (possibly null or unset). */
type TimeKeys<T> = { [K in keyof T & string]: NonNullable<T[K]> extends Date ? K : never }[keyof T & string];

/** A timestamp as a response carries it: an ISO string, or null for one that is null or unset. */
type ApiTime<V> = V extends Date ? string : null;

/** `keys` of `source`, values as they are, under their snake_case names, in the order given. */
export function apiFields<T extends object, K extends keyof T & string>(source: T, ...keys: K[]): { [P in K as SnakeCase<P>]: T[P] } {
  return Object.fromEntries(keys.map((key) => [snakeCase(key), source[key]])) as { [P in K as SnakeCase<P>]: T[P] };
}

/** The timestamps `keys` of `source` as ISO strings (null for null or unset), under their snake_case names. */
export function apiTimes<T extends object, K extends TimeKeys<T>>(source: T, ...keys: K[]): { [P in K as SnakeCase<P>]: ApiTime<T[P]> } {
  return Object.fromEntries(
    keys.map((key) => {
      const value = source[key] as Date | null | undefined;
      return [snakeCase(key), value == null ? null : new Date(value).toISOString()];
    }),
  ) as { [P in K as SnakeCase<P>]: ApiTime<T[P]> };
}
