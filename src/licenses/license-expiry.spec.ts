import { addUtcMonths, computeExpiresAt } from './license-expiry';

describe('computeExpiresAt', () => {
  const from = new Date('2026-01-31T10:00:00.000Z');

  it.each([
    ['TRIAL', '2026-02-14T10:00:00.000Z'],
    ['MONTHLY', '2026-02-28T10:00:00.000Z'],
    ['QUARTERLY', '2026-04-30T10:00:00.000Z'],
    ['YEARLY', '2027-01-31T10:00:00.000Z'],
  ] as const)('%s from 2026-01-31 is %s', (type, expected) => {
    expect(computeExpiresAt(type, from)?.toISOString()).toBe(expected);
  });

  it('PERPETUAL never expires', () => expect(computeExpiresAt('PERPETUAL', from)).toBeNull());

  it('month arithmetic clamps to the month end and handles leap years', () => {
    expect(addUtcMonths(new Date('2028-01-31T00:00:00Z'), 1).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(addUtcMonths(new Date('2026-03-15T12:30:00Z'), 1).toISOString()).toBe('2026-04-15T12:30:00.000Z');
    expect(addUtcMonths(new Date('2026-11-30T00:00:00Z'), 3).toISOString()).toBe('2027-02-28T00:00:00.000Z');
  });
});
