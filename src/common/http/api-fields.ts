/**
 * An entity's fields as a response spells them (docs/admin-api.md, Conventions: snake_case names, timestamps as ISO
 * 8601 strings). A DTO's `from` lists the fields it copies and the timestamps it writes, and only says by hand what is
 * more than a copy (a computed status, a renamed field); apiObject puts the parts together in the order given.
 *
 * Lists map a hundred rows per request through these, so they cost about what a hand-written literal costs
 * (docs/performance.md, Response fields): each part is built with a plain loop, each name is spelled once, and the
 * parts are merged with one Object.assign. Spreading the parts into a literal (`{ ...a, ...b }`) looks the same but,
 * with a part per call site of many shapes, took V8 onto a slow path: 11-60 µs per object against about 1.
 */
import { SnakeCase, snakeCase } from '../names';

/** The fields of `T` that hold a timestamp (possibly null or unset). */
type TimeKeys<T> = { [K in keyof T & string]: NonNullable<T[K]> extends Date ? K : never }[keyof T & string];

/** A timestamp as a response carries it: an ISO string, or null for one that is null or unset. */
type ApiTime<V> = V extends Date ? string : null;

/** The parts of an apiObject, merged: `[{ a: 1 }, { b: 2 }]` → `{ a: 1 } & { b: 2 }`. */
type Merged<P extends readonly object[]> = P extends readonly [infer Head, ...infer Tail extends readonly object[]]
  ? Head & Merged<Tail>
  : unknown;

/** Each field name's snake_case spelling, worked out once (the names are the DTOs' own, a fixed set). */
const spelled = new Map<string, string>();

function spell(name: string): string {
  let snake = spelled.get(name);
  if (snake === undefined) {
    snake = snakeCase(name);
    spelled.set(name, snake);
  }
  return snake;
}

/** `keys` of `source`, values as they are, under their snake_case names, in the order given. */
export function apiFields<T extends object, K extends keyof T & string>(source: T, ...keys: K[]): { [P in K as SnakeCase<P>]: T[P] } {
  const fields: Record<string, unknown> = {};
  for (const key of keys) fields[spell(key)] = source[key];
  return fields as { [P in K as SnakeCase<P>]: T[P] };
}

/** The timestamps `keys` of `source` as ISO strings (null for null or unset), under their snake_case names. */
export function apiTimes<T extends object, K extends TimeKeys<T>>(source: T, ...keys: K[]): { [P in K as SnakeCase<P>]: ApiTime<T[P]> } {
  const times: Record<string, string | null> = {};
  for (const key of keys) {
    const value = source[key] as Date | null | undefined;
    times[spell(key)] = value == null ? null : new Date(value).toISOString();
  }
  return times as { [P in K as SnakeCase<P>]: ApiTime<T[P]> };
}

/** One response object from its parts (apiFields, apiTimes, literals for the rest), their fields in the order given. */
export function apiObject<const P extends readonly object[]>(...parts: P): Merged<P> {
  return Object.assign({}, ...parts) as Merged<P>;
}
