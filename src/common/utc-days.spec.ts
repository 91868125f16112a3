import { countsByDay, utcDays } from './utc-days';

describe('utcDays and countsByDay (docs/dashboard.md, Charts)', () => {
  const now = new Date('2026-03-01T23:30:00+01:00'); // 22:30 UTC on 1 March

  it('counts whole UTC days back from the one containing now, today included', () => {
    const range = utcDays(now, -2, 3);
    expect(range.days).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
    expect(range.start.toISOString()).toBe('2026-02-27T00:00:00.000Z');
    expect(range.end.toISOString()).toBe('2026-03-02T00:00:00.000Z');
  });

  it('counts forward from today, across a month end and a leap-free February', () => {
    expect(utcDays(new Date('2026-02-27T12:00:00Z'), 0, 3).days).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
  });

  it('fills every day and key, zero without a row, and ignores rows of other days or keys', () => {
    const rows = [
      { day: '2026-02-28', key: 'a', n: 3 },
      { day: '2026-02-28', key: 'x', n: 9 },
      { day: '2026-01-01', key: 'b', n: 5 },
      { day: '2026-03-01', key: 'b', n: 1 },
    ];
    expect(countsByDay(['2026-02-28', '2026-03-01'], ['a', 'b'] as const, rows)).toEqual([
      { day: '2026-02-28', counts: { a: 3, b: 0 } },
      { day: '2026-03-01', counts: { a: 0, b: 1 } },
    ]);
    expect(countsByDay([], ['a'], rows)).toEqual([]);
  });
});
