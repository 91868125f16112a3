import { formatTimestamp, isoTimestamp } from './time';

describe('times in pages', () => {
  it('formats timestamps in UTC and shows a dash for nothing', () => {
    expect(formatTimestamp(new Date('2026-01-31T14:05:59.900Z'))).toBe('2026-01-31 14:05 UTC');
    expect(formatTimestamp('2026-01-31T14:05:00+02:00')).toBe('2026-01-31 12:05 UTC');
    expect(formatTimestamp(null)).toBe('—');
    expect(formatTimestamp('not a date')).toBe('—');
  });

  it('gives the exact instant for the browser to localise, or nothing', () => {
    expect(isoTimestamp('2026-01-31T14:05:00+02:00')).toBe('2026-01-31T12:05:00.000Z');
    expect(isoTimestamp(undefined)).toBe('');
  });
});
