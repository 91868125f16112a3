import { AppError } from '../common/errors/app-error';
import type { LicensePayload } from './license-payload';

/** The text armor of licence files (docs/client-api.md, Licence file): base64 of UTF-8 JSON in lines of 64 characters between two markers. */
export const LICENSE_FILE_LABEL = 'LICENSE FILE';
export const ACTIVATION_REQUEST_LABEL = 'ACTIVATION REQUEST';
/** An activation request is a few hundred bytes; anything near the 64 KiB body limit is not one. */
export const MAX_ACTIVATION_REQUEST_LENGTH = 16 * 1024;
const DAY_MS = 86_400_000;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A licence file's `license`: the activation payload plus the file's issue and expiry times. */
export interface LicenseFilePayload extends LicensePayload {
  file_issued_at: string;
  file_expires_at: string;
}

export function armor(label: string, value: unknown): string {
  const lines =
    Buffer.from(JSON.stringify(value), 'utf8')
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`, ''].join('\n');
}

/** `issuedAt` + the TTL in whole days (a day is 24 h: the file's lifetime does not move with daylight saving). */
export function licenseFileTimes(issuedAt: Date, ttlDays: number): { file_issued_at: string; file_expires_at: string } {
  return { file_issued_at: issuedAt.toISOString(), file_expires_at: new Date(issuedAt.getTime() + ttlDays * DAY_MS).toISOString() };
}

/** Reads a licence file back into `{license, signature}` and a version 2 file's `envelope` (for verify-license and tests); undefined when malformed. */
export function decodeLicenseFile(text: string): { license: Record<string, unknown>; signature: string; envelope?: unknown } | undefined {
  const lines = text
    .trim()
    .split(/\r?\n/)
    .map((line) => line.trim());
  if (lines[0] !== `-----BEGIN ${LICENSE_FILE_LABEL}-----` || lines[lines.length - 1] !== `-----END ${LICENSE_FILE_LABEL}-----`)
    return undefined;
  const base64 = lines.slice(1, -1).join('');
  if (!BASE64.test(base64)) return undefined;
  try {
    const value = JSON.parse(strictUtf8.decode(Buffer.from(base64, 'base64'))) as {
      license?: unknown;
      signature?: unknown;
      envelope?: unknown;
    };
    if (typeof value.license !== 'object' || value.license === null || typeof value.signature !== 'string') return undefined;
    const document = { license: value.license as Record<string, unknown>, signature: value.signature };
    return 'envelope' in value ? { ...document, envelope: value.envelope } : document;
  } catch {
    return undefined;
  }
}

const malformed = (message: string) => AppError.field('request', message);

/**
 * Parses an `ACTIVATION REQUEST` armor strictly: the size, both markers, nothing but base64 between them, and a JSON
 * object inside. Blank lines, surrounding whitespace, CRLF line ends and a byte-order mark are tolerated (e-mail and
 * Windows editors add them); anything else is a VALIDATION_ERROR naming `request`.
 */
export function parseActivationRequest(text: string): Record<string, unknown> {
  if (text.length > MAX_ACTIVATION_REQUEST_LENGTH) {
    throw malformed(`request must be at most ${MAX_ACTIVATION_REQUEST_LENGTH} characters (an activation request is a few hundred)`);
  }
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (
    lines[0] !== `-----BEGIN ${ACTIVATION_REQUEST_LABEL}-----` ||
    lines[lines.length - 1] !== `-----END ${ACTIVATION_REQUEST_LABEL}-----`
  ) {
    throw malformed(
      `request must start with -----BEGIN ${ACTIVATION_REQUEST_LABEL}----- and end with -----END ${ACTIVATION_REQUEST_LABEL}-----`,
    );
  }
  const base64 = lines.slice(1, -1).join('');
  if (base64 === '' || !BASE64.test(base64))
    throw malformed('request must contain base64 (A-Z, a-z, 0-9, +, /, = padding) between its markers');
  let value: unknown;
  try {
    value = JSON.parse(strictUtf8.decode(Buffer.from(base64, 'base64')));
  } catch {
    throw malformed('request does not contain UTF-8 JSON (the body of /activate)');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed('request must contain a JSON object');
  return value as Record<string, unknown>;
}
