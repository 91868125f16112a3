import { registerDecorator, ValidationOptions } from 'class-validator';
import { parseIsoTimestamp } from '../validation/iso-timestamp';

/**
 * A position in a newest-first list: the sort key (created_at, id) of the last row of a page. The next page
 * is the rows strictly after it in `created_at DESC, id DESC` order, so the cursor stays valid when that row
 * is deleted or when rows are added before it.
 */
export interface KeysetPosition {
  /** created_at as PostgreSQL's text in UTC with all six fractional digits: `2026-03-01T10:11:12.123456Z`. */
  createdAt: string;
  /** The row's id in decimal (licence ids are integers, audit ids bigints). */
  id: string;
}

/** A cursor is at most 64 base64url characters (47 bytes: a 27-character timestamp, a comma, a 19-digit id). */
export const MAX_CURSOR_LENGTH = 64;
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

const POSITION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z),([1-9]\d{0,18})$/;
const MAX_BIGINT = 9_223_372_036_854_775_807n;

/** The `after` cursor of a position: base64url (no padding) of `<created_at>,<id>`. Opaque to clients. */
export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(`${position.createdAt},${position.id}`, 'latin1').toString('base64url');
}

/**
 * The position in a cursor, or undefined for anything this server did not (or could not) make: not canonical
 * base64url, another structure, a timestamp that is not a real one between years 1 and 9999, an id that is not
 * a positive bigint.
 */
export function decodeCursor(cursor: unknown): KeysetPosition | undefined {
  if (typeof cursor !== 'string' || !new RegExp(CURSOR_PATTERN).test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder skips what it cannot read: only the canonical spelling of the bytes is a cursor.
  if (bytes.toString('base64url') !== cursor) return undefined;
  const m = POSITION.exec(bytes.toString('latin1'));
  if (!m || parseIsoTimestamp(m[1]) === undefined || BigInt(m[2]) > MAX_BIGINT) return undefined;
  return { createdAt: m[1], id: m[2] };
}

/** A cursor from a list's Link header (decodeCursor accepts it). */
export function IsKeysetCursor(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isKeysetCursor',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => decodeCursor(value) !== undefined,
        defaultMessage: (args) => `${args?.property} must be the cursor of a Link rel="next" header of this list`,
      },
    });
}

/** Rejects the property when `other` is given too (query parameters that exclude each other). */
export function NotWith(other: string, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'notWith',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      options,
      validator: {
        validate: (_value: unknown, args) => (args?.object as Record<string, unknown>)[other] === undefined,
        defaultMessage: (args) => `${args?.property} cannot be combined with ${other}`,
      },
    });
}
