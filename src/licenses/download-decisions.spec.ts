import { ErrorCode } from '../common/errors/error-codes';
import type { UpdatePolicy } from '../products/product.entity';
import { decideDownload, EntitlementRelease } from './download-decisions';

const NOW = new Date('2026-06-01T00:00:00Z');
const day = (n: number) => new Date(NOW.getTime() + n * 86_400_000);

interface R extends EntitlementRelease {
  name: string;
}
const rel = (name: string, publishedDay: number | null, extra: Partial<R> = {}): R => ({
  name,
  publishedAt: publishedDay === null ? null : day(publishedDay),
  yankedAt: null,
  requiredFeatures: [],
  ...extra,
});
const RELEASES: R[] = [
  rel('old', -100),
  rel('recent', -5),
  rel('draft', null),
  rel('yanked', -50, { yankedAt: day(-1) }),
  rel('pro', -60, { requiredFeatures: ['PRO'] }),
];

const licence = (o: { expiresDay?: number | null; graceDays?: number; revoked?: boolean; active?: boolean; features?: string[] } = {}) => ({
  revoked: o.revoked ?? false,
  active: o.active ?? true,
  expiresAt: o.expiresDay === undefined || o.expiresDay === null ? null : day(o.expiresDay),
  graceDays: o.graceDays ?? 0,
  features: o.features ?? [],
});

type Case = [
  name: string,
  license: ReturnType<typeof licence> | null,
  seatHeld: boolean | null,
  policy: UpdatePolicy,
  expected: string[] | ErrorCode,
];

// One table, read top to bottom: the decision's order is the rows' order (docs/releases.md, Entitlement).
const CASES: Case[] = [
  ['unknown key', null, true, 'current', ErrorCode.INVALID_KEY],
  ['active, no expiry: every published, unyanked release without missing features', licence(), true, 'current', ['old', 'recent']],
  ['active with the feature: the feature-gated release too', licence({ features: ['PRO'] }), true, 'current', ['old', 'recent', 'pro']],
  ['in grace: still usable', licence({ expiresDay: -2, graceDays: 7 }), true, 'current', ['old', 'recent']],
  ['expired, current policy', licence({ expiresDay: -10 }), true, 'current', ErrorCode.KEY_EXPIRED],
  ['expired, perpetual fallback: only releases published before expires_at', licence({ expiresDay: -10 }), true, 'perpetual_fallback', ['old']],
  ['expired, fallback, grace past: the cut-off is expires_at, not the grace end', licence({ expiresDay: -8, graceDays: 2 }), true, 'perpetual_fallback', ['old']],
  ['expired, fallback, nothing published before the expiry', licence({ expiresDay: -200 }), true, 'perpetual_fallback', ErrorCode.KEY_EXPIRED],
  ['revoked: never, whatever the policy', licence({ revoked: true }), true, 'perpetual_fallback', ErrorCode.KEY_REVOKED],
  ['suspended: never, whatever the policy', licence({ active: false }), true, 'perpetual_fallback', ErrorCode.KEY_SUSPENDED],
  ['revoked before suspended', licence({ revoked: true, active: false }), true, 'current', ErrorCode.KEY_REVOKED],
  ['usable but this machine holds no seat', licence(), false, 'current', ErrorCode.NOT_ACTIVATED],
  ['status before the seat: expired and no seat', licence({ expiresDay: -10 }), false, 'current', ErrorCode.KEY_EXPIRED],
  ['fallback and no seat', licence({ expiresDay: -10 }), false, 'perpetual_fallback', ErrorCode.NOT_ACTIVATED],
  ['no machine asking (a link, the portal): no seat needed', licence(), null, 'current', ['old', 'recent']],
];

describe('decideDownload (docs/releases.md, Entitlement)', () => {
  it.each(CASES)('%s', (_name, license, seatHeld, policy, expected) => {
    const decision = decideDownload(license, seatHeld === null ? null : { seatHeld }, policy, RELEASES, NOW);
    if (typeof expected === 'string') {
      expect(decision.kind).toBe('deny');
      if (decision.kind === 'deny') {
        expect(decision.error.code).toBe(expected);
        expect(decision.error.status).toBe(400);
      }
    } else {
      expect(decision.kind).toBe('allow');
      if (decision.kind === 'allow') expect(decision.releases.map((r) => r.name).sort()).toEqual([...expected].sort());
    }
  });

  it('a release published at the very instant of expiry is not before it', () => {
    const license = licence({ expiresDay: -5 });
    const decision = decideDownload(license, { seatHeld: true }, 'perpetual_fallback', [rel('at', -5), rel('before', -6)], NOW);
    expect(decision.kind === 'allow' && decision.releases.map((r) => r.name)).toEqual(['before']);
  });
});
