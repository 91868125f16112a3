import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';

/** Whether `hex` is the hex HMAC-SHA256 of `message` under `secret`, compared in constant time. */
export function hmacMatches(secret: string, message: Buffer, hex: string): boolean {
  const expected = createHmac('sha256', secret).update(message).digest();
  if (!/^[0-9a-f]+$/i.test(hex) || hex.length !== expected.length * 2) return false;
  return timingSafeEqual(expected, Buffer.from(hex, 'hex'));
}

export const invalidSignature = (message: string) => new AppError(ErrorCode.INVALID_SIGNATURE, 400, message);

/** The signed body as JSON: 400 VALIDATION_ERROR for a body that is not, or that holds a NUL (jsonb cannot store it). */
export function parseSignedJson(raw: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw AppError.field('body', 'The body is not JSON');
  }
  if (raw.includes('\\u0000')) throw AppError.field('body', 'The event contains a NUL character (\\u0000)');
  return value;
}

/** A store id we can keep (the ledger's columns hold 255 characters): strings and whole numbers; anything else is no id. */
export function storeId(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return typeof value === 'string' && value.length > 0 && value.length <= 255 ? value : null;
}

/** An ISO 8601 time a store sent, as a Date; null for anything else or a time PostgreSQL cannot store. */
export function isoTime(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const date = new Date(value);
  const year = date.getUTCFullYear();
  return Number.isNaN(date.getTime()) || year < 1 || year > 9999 ? null : date;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
