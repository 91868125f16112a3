import { parseIsoTimestamp } from './iso-timestamp';

describe('parseIsoTimestamp', () => {
  it.each([
    ['2026-01-31T10:00:00Z', '2026-01-31T10:00:00.000Z'],
    ['2026-01-31T10:00Z', '2026-01-31T10:00:00.000Z'],
    ['2026-01-31T10:00:00.5Z', '2026-01-31T10:00:00.500Z'],
    ['2026-01-31T10:00:00.123456Z', '2026-01-31T10:00:00.123Z'],
    ['2026-01-31T10:00:00+01:00', '2026-01-31T09:00:00.000Z'],
    ['2026-01-31T10:00:00-05:30', '2026-01-31T15:30:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['2026-01-31t10:00:00z', '2026-01-31T10:00:00.000Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59+23:59', '9999-12-31T00:00:59.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T23:59:59+23:59', '0001-01-01T00:00:59.000Z'],
  ])('accepts %s as %s', (input, iso) => expect(parseIsoTimestamp(input)?.toISOString()).toBe(iso));

  it.each([
    ['no zone', '2026-01-31T10:00:00'],
    ['a date only', '2026-01-31'],
    ['a day that does not exist', '2026-02-30T00:00:00Z'],
    ['February 29 of a common year', '2027-02-29T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['hour 24', '2026-01-31T24:00:00Z'],
    ['minute 60', '2026-01-31T10:60:00Z'],
    ['second 60', '2026-01-31T10:00:60Z'],
    ['an offset of 25 hours', '2026-01-31T10:00:00+25:00'],
    ['a space instead of T', '2026-01-31 10:00:00Z'],
    ['surrounding spaces', ' 2026-01-31T10:00:00Z'],
    ['words', 'tomorrow'],
    ['an empty string', ''],
    ['a time after year 9999 once the zone is applied', '9999-12-31T23:59:59-23:59'],
    ['a time after year 9999 by a minute', '9999-12-31T23:59:00-00:01'],
    ['year 0', '0000-12-31T23:59:59Z'],
    ['a time before year 1 once the zone is applied', '0001-01-01T00:00:00+00:01'],
  ])('rejects %s', (_label, input) => expect(parseIsoTimestamp(input)).toBeUndefined());

  it.each([[1767225600000], [null], [undefined], [{}]])('rejects the non-string %p', (value) =>
    expect(parseIsoTimestamp(value)).toBeUndefined(),
  );
});
