import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../common/errors/app-error';
import { ErrorCode } from '../common/errors/error-codes';

/** A hex HMAC-SHA256: anything else is refused before any HMAC is computed. */
const HMAC_HEX = /^[0-9a-f]{64}$/i;

/**
 * Most signatures one header may offer (a store sends one per secret while a secret rotates): a header with more is
 * refused before any HMAC is computed (docs/security.md, Store signatures cost one HMAC).
 */
export const MAX_SIGNATURE_CANDIDATES = 4;

/**
 * Whether any of `candidates` is the hex HMAC-SHA256 of the concatenated `message` parts under `secret`, compared in
 * constant time. One HMAC at most, whatever the candidates: the shapes are checked first, and none well-formed
 * costs none (docs/security.md, Store signatures cost one HMAC).
 */
export function hmacMatchesAny(secret: string, message: Buffer[], candidates: string[]): boolean {
  const wellFormed = candidates.filter((hex) => HMAC_HEX.test(hex));
  if (wellFormed.length === 0) return false;
  const hmac = createHmac('sha256', secret);
  for (const part of message) hmac.update(part);
  const expected = hmac.digest();
  let matched = false;
  // Every candidate is compared (no early exit), so the time does not tell which one matched.
  for (const hex of wellFormed) matched = timingSafeEqual(expected, Buffer.from(hex, 'hex')) || matched;
  return matched;
}

/** Whether `hex` is the hex HMAC-SHA256 of `message` under `secret` (one candidate of hmacMatchesAny). */
export function hmacMatches(secret: string, message: Buffer, hex: string): boolean {
  return hmacMatchesAny(secret, [message], [hex]);
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
