import { ErrorCode } from '../../../src/common/errors/error-codes';
import type { RawResponse } from './raw-http';

const ERROR_CODES = new Set<string>(Object.values(ErrorCode));

/** An error answer never echoes a big input back: bounded, whatever was sent. */
export const MAX_ERROR_BODY_BYTES = 16 * 1024;

/**
 * What a server must never send: stack frames, source paths, driver or SQL error texts, TypeORM
 * class names. Checked on every response after the attacker's own strings are removed from it
 * (an error message may legitimately quote a rejected value).
 */
export const LEAK_PATTERNS: RegExp[] = [
  /\bat [\w$.<>[\]]+ \(/, // "at Foo.bar (" stack frame
  /\bat (async )?\/[\w/.-]+:\d+/, // "at /app/dist/x.js:1"
  /\/(src|dist|node_modules)\/[\w/.-]+\.(ts|js)/,
  /\.(ts|js):\d+:\d+/,
  /QueryFailedError|TypeORMError|EntityMetadataNotFound|EntityPropertyNotFound|CannotExecuteNotConnected/,
  /syntax error at or near/i,
  /violates (not-null|unique|foreign key|check) constraint/i,
  /duplicate key value/i,
  /invalid (byte sequence|input syntax) for/i,
  /\b(relation|column) "[a-z_]+" (does not exist|of relation)/i,
  /\bSELECT\b[^"]{0,200}\bFROM\b/i,
  /\bINSERT INTO\b/i,
  /\bUPDATE "?[a-z_]+"? SET\b/i,
  /Maximum call stack size/i,
  /"stack"\s*:/,
  /RangeError|TypeError|ReferenceError|SyntaxError: /,
];

/** Every string in a value (the request's own text), to discount it when looking for leaks. */
export function stringsIn(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 64) return out;
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsIn(v, out, depth + 1);
    }
  }
  return out;
}

/** Response text with every echo of the request's strings removed. */
function withoutEchoes(text: string, sent: string[]): string {
  let rest = text;
  for (const s of sent.filter((x) => x.length >= 3).sort((a, b) => b.length - a.length)) {
    rest = rest.split(JSON.stringify(s).slice(1, -1)).join('').split(s).join('');
  }
  return rest;
}

export function leaks(res: RawResponse, sent: string[] = []): string[] {
  const text = withoutEchoes(
    `${Object.entries(res.headers)
      .map(([k, v]) => `${k}: ${v.join(', ')}`)
      .join('\n')}\n${res.body}`,
    sent,
  );
  return LEAK_PATTERNS.filter((p) => p.test(text)).map((p) => `leaks ${p}`);
}

/** Problems with an error answer: the error body exactly (docs/errors.md, Body), JSON, bounded, nosniff. */
export function contractProblems(res: RawResponse): string[] {
  const problems: string[] = [];
  if (!(res.headers['content-type']?.[0] ?? '').startsWith('application/json'))
    problems.push(`content-type ${res.headers['content-type']?.[0]}`);
  if (res.headers['x-content-type-options']?.[0] !== 'nosniff') problems.push('no X-Content-Type-Options: nosniff');
  if (Buffer.byteLength(res.body) > MAX_ERROR_BODY_BYTES) problems.push(`error body of ${Buffer.byteLength(res.body)} bytes`);
  const body = res.json as { error?: Record<string, unknown> } | undefined;
  const error = body?.error;
  if (!body || typeof body !== 'object' || Object.keys(body).join() !== 'error' || !error || typeof error !== 'object') {
    return [...problems, `not the error body: ${res.body.slice(0, 200)}`];
  }
  const extra = Object.keys(error).filter((k) => !['code', 'message', 'details'].includes(k));
  if (extra.length) problems.push(`unexpected error members ${extra.join()}`);
  if (typeof error.code !== 'string' || !ERROR_CODES.has(error.code)) problems.push(`unknown code ${String(error.code)}`);
  if (typeof error.message !== 'string' || error.message.length === 0) problems.push('no message');
  if (error.details !== undefined && (typeof error.details !== 'object' || error.details === null || Array.isArray(error.details)))
    problems.push('details is not an object');
  return problems;
}

/** The `field`s a VALIDATION_ERROR names. */
export const errorFields = (res: RawResponse): string[] =>
  ((res.json as { error?: { details?: { fields?: { field: string }[] } } })?.error?.details?.fields ?? []).map((f) => f.field);

export const errorCode = (res: RawResponse): string | undefined => (res.json as { error?: { code?: string } })?.error?.code;
