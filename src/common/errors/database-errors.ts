// Errors that mean "the database cannot be reached right now" rather than "this query is wrong".
const UNAVAILABLE_SYSTEM_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'EAI_AGAIN']);
// SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown / cannot connect now), 53300 (too many connections).
const UNAVAILABLE_SQLSTATES = /^(08\d{3}|57P0[1-3]|53300)$/;
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'is not currently accepting connections',
  'Connection is not established',
  'the database system is shutting down',
  'the database system is starting up',
];

/** The fields of driver, TypeORM and aggregate errors that tell what went wrong; any of them may be absent. */
interface ErrorFields {
  code?: unknown;
  message?: unknown;
  constraint?: unknown;
  driverError?: unknown;
  cause?: unknown;
  errors?: unknown;
  syscall?: unknown;
}

const fieldsOf = (err: unknown): ErrorFields | undefined => (typeof err === 'object' && err !== null ? err : undefined);

export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = fieldsOf(err), depth = 0; e && depth < 4; e = fieldsOf(e.driverError ?? e.cause), depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_SYSTEM_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code)) return true;
    // A Unix-socket connection to a stopped server: its socket file is gone (docs/configuration.md, Database URL).
    if (code === 'ENOENT' && e.syscall === 'connect') return true;
    const message = typeof e.message === 'string' ? e.message : '';
    if (UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
    if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true; // AggregateError from dual-stack connects
  }
  return false;
}

/** PostgreSQL unique_violation, with the constraint's name when known. */
export function uniqueViolation(err: unknown): string | undefined {
  const e = fieldsOf(fieldsOf(err)?.driverError ?? err);
  return e?.code === '23505' ? (typeof e.constraint === 'string' ? e.constraint : '') : undefined;
}
