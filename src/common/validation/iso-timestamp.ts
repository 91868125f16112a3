import { registerDecorator, ValidationOptions } from 'class-validator';

// Date and time with an explicit zone; a timestamp without one would mean the server's local time.
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

// Four-digit years only, after the zone is applied: 9999-12-31T23:59:59-23:59 would otherwise be stored (and signed) as +010000-...
export const EARLIEST_TIMESTAMP = Date.parse('0001-01-01T00:00:00Z');
export const LATEST_TIMESTAMP = Date.parse('9999-12-31T23:59:59.999Z');

/** Parses an ISO 8601 timestamp with a zone (`2026-01-31T10:00:00Z`, `...+01:00`); undefined when malformed or not a real date. */
export function parseIsoTimestamp(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO_TIMESTAMP.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second = '0', offsetHours = '0', offsetMinutes = '0'] = m.slice(1);
  // V8 rolls 2026-02-30 over to March 2: check the calendar date ourselves.
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59 || Number(offsetHours) > 23 || Number(offsetMinutes) > 59)
    return undefined;
  const date = new Date(value);
  const time = date.getTime();
  return Number.isNaN(time) || time < EARLIEST_TIMESTAMP || time > LATEST_TIMESTAMP ? undefined : date;
}

/** An ISO 8601 timestamp with a zone designator and a real calendar date. */
export function IsIsoTimestamp(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isIsoTimestamp',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => parseIsoTimestamp(value) !== undefined,
        defaultMessage: (args) =>
          `${args?.property} must be an ISO 8601 timestamp with a zone between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, e.g. 2026-01-31T10:00:00Z`,
      },
    });
}
