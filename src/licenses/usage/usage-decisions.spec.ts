import { ErrorCode } from '../../common/errors/error-codes';
import { decideUsage, MeteredLicense, usageAnswer, usagePeriod, usageSummary, usesIn } from './usage-decisions';

const created = new Date('2026-01-15T10:20:30.456Z');
const license = (over: Partial<MeteredLicense> = {}): MeteredLicense => ({
  revoked: false,
  active: true,
  expiresAt: null,
  graceDays: 7,
  createdAt: created,
  policy: { max_uses: 500, uses_period: 'month' },
  ...over,
});
const now = new Date('2026-03-10T12:00:00.000Z');
const seat = { id: '1' };

/** docs/licences.md, Usage metering: the meter's periods and checks, table-driven. */
describe('usagePeriod: UTC calendar months, instants around the boundaries', () => {
  it.each([
    ['2026-01-31T23:59:59.999Z', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['2026-02-01T00:00:00.001Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['2028-02-29T23:59:59.999Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z'],
    // 00:30 on 1 March in Belgrade (UTC+1) is still February in UTC.
    ['2026-02-28T23:30:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
  ])('month at %s: [%s, %s)', (at, start, end) => {
    const period = usagePeriod({ uses_period: 'month' }, created, new Date(at));
    expect([period.start.toISOString(), period.end?.toISOString()]).toEqual([start, end]);
  });

  it('"none": one period from the licence\'s creation, without an end', () => {
    expect(usagePeriod({ uses_period: 'none' }, created, now)).toEqual({ start: created, end: null });
  });

  it("a counter counts only in its own period: last month's uses are not this month's", () => {
    const jan = usagePeriod({ uses_period: 'month' }, created, new Date('2026-01-31T23:59:59.999Z'));
    const feb = usagePeriod({ uses_period: 'month' }, created, new Date('2026-02-01T00:00:00.000Z'));
    const janCounter = { periodStart: jan.start, uses: 500 };
    expect(usesIn(jan, janCounter)).toBe(500);
    expect(usesIn(feb, janCounter)).toBe(0);
    expect(usesIn(feb, null)).toBe(0);
  });
});

describe('decideUsage: the codes of validate first, then the meter', () => {
  it.each([
    ['unknown licence', null, seat, ErrorCode.INVALID_KEY],
    ['revoked', license({ revoked: true, active: false }), seat, ErrorCode.KEY_REVOKED],
    ['suspended', license({ active: false }), seat, ErrorCode.KEY_SUSPENDED],
    ['expired past grace', license({ expiresAt: new Date('2026-01-01T00:00:00Z'), graceDays: 0 }), seat, ErrorCode.KEY_EXPIRED],
    ['suspended and no seat: the status first', license({ active: false }), null, ErrorCode.KEY_SUSPENDED],
    ['no seat (released or never bound)', license(), null, ErrorCode.NOT_ACTIVATED],
  ])('%s -> 400 %s', (_name, lic, s, code) => {
    const decision = decideUsage(lic, s, now);
    expect(decision.kind).toBe('deny');
    if (decision.kind === 'deny') expect([decision.error.status, decision.error.code]).toEqual([400, code]);
  });

  it('in grace still counts', () => {
    const decision = decideUsage(license({ expiresAt: new Date('2026-03-08T00:00:00Z'), graceDays: 7 }), seat, now);
    expect(decision.kind).toBe('count');
  });

  it('not metered (max_uses null): counts nothing', () => {
    expect(decideUsage(license({ policy: { max_uses: null, uses_period: 'month' } }), seat, now)).toEqual({ kind: 'unmetered' });
  });

  it('metered: counts into this UTC month, up to max_uses', () => {
    expect(decideUsage(license(), seat, now)).toEqual({
      kind: 'count',
      maxUses: 500,
      period: { start: new Date('2026-03-01T00:00:00.000Z'), end: new Date('2026-04-01T00:00:00.000Z') },
    });
  });
});

describe('usage answers', () => {
  it('remaining never goes below 0; "none" has no period end', () => {
    expect(usageAnswer(5, 5, { start: created, end: null })).toEqual({
      uses: 5,
      max_uses: 5,
      remaining: 0,
      period_start: created.toISOString(),
      period_end: null,
    });
  });

  it("validate shows this period's uses, or nulls when not metered", () => {
    const march = { periodStart: new Date('2026-03-01T00:00:00.000Z'), uses: 7 };
    expect(usageSummary(license(), march, now)).toEqual({ uses: 7, max_uses: 500 });
    expect(usageSummary(license(), march, new Date('2026-04-01T00:00:00.000Z'))).toEqual({ uses: 0, max_uses: 500 });
    expect(usageSummary(license({ policy: { max_uses: null, uses_period: 'none' } }), march, now)).toEqual({ uses: null, max_uses: null });
  });
});
