import { ErrorCode } from '../../common/errors/error-codes';
import type { Activation } from './activation.entity';
import type { License } from '../license.entity';
import { decideActivation, decideDeactivation, decideHeartbeat, decideValidation } from './seat-decisions';

const NOW = new Date('2026-06-01T12:00:00Z');
const DAY = 86_400_000;
const fp = (n: number) => `sha256:${String(n).repeat(64).slice(0, 64)}`;

function licence(overrides: Partial<License> = {}, product: Record<string, unknown> = {}): License {
  return {
    id: 1,
    productId: 2,
    limits: {},
    policy: {},
    active: true,
    revoked: false,
    expiresAt: new Date(NOW.getTime() + 30 * DAY),
    graceDays: 7,
    product: { code: 'POS', defaultLimits: { max_installations: 1 }, defaultPolicy: {}, ...product },
    ...overrides,
  } as License;
}

const seat = (n: number, lastSeenAgoMs = 0): Activation =>
  ({
    id: String(n),
    machineFingerprint: fp(n),
    hostname: `host-${n}`,
    activatedAt: new Date(NOW.getTime() - n * 1000),
    lastSeenAt: new Date(NOW.getTime() - lastSeenAgoMs),
  }) as Activation;

const request = (n: number, product?: string) => ({ licenseKey: 'K', machineFingerprint: fp(n), hostname: 'h', product });
const expired = { expiresAt: new Date(NOW.getTime() - 10 * DAY), graceDays: 1 };

describe('decideActivation: every code, first failure wins', () => {
  it.each([
    ['unknown key', null, [], request(1), ErrorCode.INVALID_KEY],
    ['unknown key, whatever else', null, [seat(2)], request(1, 'OTHER'), ErrorCode.INVALID_KEY],
    ['other product', licence(), [], request(1, 'OTHER'), ErrorCode.PRODUCT_MISMATCH],
    ['other product before revoked', licence({ revoked: true }), [], request(1, 'OTHER'), ErrorCode.PRODUCT_MISMATCH],
    ['revoked', licence({ revoked: true }), [], request(1), ErrorCode.KEY_REVOKED],
    ['revoked before suspended and expired', licence({ revoked: true, active: false, ...expired }), [], request(1), ErrorCode.KEY_REVOKED],
    ['suspended', licence({ active: false }), [], request(1), ErrorCode.KEY_SUSPENDED],
    ['suspended before expired', licence({ active: false, ...expired }), [], request(1), ErrorCode.KEY_SUSPENDED],
    ['expired', licence(expired), [], request(1), ErrorCode.KEY_EXPIRED],
    ['expired before seats full', licence(expired), [seat(2)], request(1), ErrorCode.KEY_EXPIRED],
    ['seats full', licence(), [seat(2)], request(1), ErrorCode.ALREADY_ACTIVATED],
  ] as const)('%s', (_label, lic, seats, req, code) => {
    const decision = decideActivation(lic, [...seats], req, NOW);
    expect(decision.kind === 'deny' && decision.error.code).toBe(code);
  });

  it('ALREADY_ACTIVATED names the most recent binding and the limit', () => {
    const decision = decideActivation(licence({ limits: { max_installations: 2 } }), [seat(2), seat(3)], request(1), NOW);
    expect(decision.kind === 'deny' && decision.error.details).toEqual({
      activated_on: 'host-2',
      activated_at: seat(2).activatedAt.toISOString(),
      max_installations: 2,
    });
  });

  it('the machine holding a seat refreshes it even when the seats are full', () => {
    const own = seat(1);
    expect(decideActivation(licence(), [own], request(1), NOW)).toEqual({ kind: 'refresh', seat: own, release: [] });
  });

  it('a licence in grace binds', () => {
    expect(decideActivation(licence({ expiresAt: new Date(NOW.getTime() - DAY), graceDays: 7 }), [], request(1), NOW).kind).toBe('bind');
  });

  it('a dead seat is released and does not count; a live one does', () => {
    const dead = seat(2, 3_600_000);
    const lic = licence({ policy: { heartbeat_timeout_seconds: 60 } });
    expect(decideActivation(lic, [dead], request(1), NOW)).toEqual({ kind: 'bind', live: [], release: [dead] });
    const decision = decideActivation(lic, [seat(3, 1000), dead], request(1), NOW);
    expect(decision.kind === 'deny' && [decision.error.code, decision.release]).toEqual([ErrorCode.ALREADY_ACTIVATED, [dead]]);
  });

  it('the machine whose own seat died binds again (a new seat), its dead seat released', () => {
    const own = seat(1, 3_600_000);
    const decision = decideActivation(licence({ policy: { heartbeat_timeout_seconds: 60 } }), [own], request(1), NOW);
    expect(decision).toEqual({ kind: 'bind', live: [], release: [own] });
  });

  it('a status denial releases no dead seat (the licence is not usable)', () => {
    const dead = seat(2, 3_600_000);
    const decision = decideActivation(licence({ revoked: true, policy: { heartbeat_timeout_seconds: 60 } }), [dead], request(1), NOW);
    expect(decision.release).toEqual([]);
  });
});

describe('decideDeactivation', () => {
  const limited = (n: number) => licence({ policy: { max_deactivations_per_30_days: n } });
  const ago = (days: number) => new Date(NOW.getTime() - days * DAY);

  it.each([
    ['unknown key', null, [], [], ErrorCode.INVALID_KEY],
    ['no seat for the machine', licence(), [seat(2)], [], ErrorCode.NOT_ACTIVATED],
    ['no seat before the limit', limited(0), [], [], ErrorCode.NOT_ACTIVATED],
    ['limit reached', limited(2), [seat(1)], [ago(20), ago(10)], ErrorCode.DEACTIVATION_LIMIT_REACHED],
    ['a limit of 0', limited(0), [seat(1)], [], ErrorCode.DEACTIVATION_LIMIT_REACHED],
  ] as const)('%s', (_label, lic, seats, recent, code) => {
    const decision = decideDeactivation(lic, [...seats], [...recent], request(1), NOW);
    expect(decision.kind === 'deny' && decision.error.code).toBe(code);
  });

  it('a dead own seat is no seat: NOT_ACTIVATED, and it is released anyway', () => {
    const own = seat(1, 3_600_000);
    const decision = decideDeactivation(licence({ policy: { heartbeat_timeout_seconds: 60 } }), [own], [], request(1), NOW);
    expect(decision.kind === 'deny' && [decision.error.code, decision.release]).toEqual([ErrorCode.NOT_ACTIVATED, [own]]);
  });

  it('next_allowed_at is when enough deactivations leave the 30-day window; older ones do not count', () => {
    const decision = decideDeactivation(limited(2), [seat(1)], [ago(40), ago(20), ago(10)], request(1), NOW);
    expect(decision.kind === 'deny' && decision.error.details).toEqual({
      max_deactivations_per_30_days: 2,
      deactivations_last_30_days: 2,
      next_allowed_at: new Date(ago(20).getTime() + 30 * DAY).toISOString(),
    });
  });

  it.each([
    ['an active', true, licence()],
    ['a revoked', false, licence({ revoked: true })],
    ['a suspended', false, licence({ active: false })],
    ['an expired', false, licence(expired)],
  ] as const)('%s licence releases the seat; can_reactivate %s', (_label, canReactivate, lic) => {
    const decision = decideDeactivation(lic, [seat(1), seat(2)], [], request(1), NOW);
    expect(decision.kind === 'release' && [decision.seat.id, decision.live.map((s) => s.id), decision.canReactivate]).toEqual([
      '1',
      ['2'],
      canReactivate,
    ]);
  });
});

describe('decideValidation: status codes before NOT_ACTIVATED', () => {
  const fields = { expiresAt: null, graceDays: 7, active: true, revoked: false };
  it.each([
    ['valid', fields, { stale: false }, null, false],
    ['valid and stale: touches', fields, { stale: true }, null, true],
    ['no seat', fields, null, ErrorCode.NOT_ACTIVATED, false],
    ['revoked before no seat', { ...fields, revoked: true }, null, ErrorCode.KEY_REVOKED, false],
    ['suspended before no seat', { ...fields, active: false }, null, ErrorCode.KEY_SUSPENDED, false],
    ['expired before no seat', { ...fields, ...expired }, null, ErrorCode.KEY_EXPIRED, false],
    ['expired with a stale seat: no touch', { ...fields, ...expired }, { stale: true }, ErrorCode.KEY_EXPIRED, false],
  ] as const)('%s', (_label, lic, s, code, touch) => {
    const decision = decideValidation(lic, s, NOW);
    expect([decision.code, decision.valid, decision.touch]).toEqual([code, code === null, touch]);
  });
});

describe('decideHeartbeat', () => {
  const fields = { expiresAt: null, graceDays: 7, active: true, revoked: false, heartbeatTimeoutSeconds: 60 };
  it('INVALID_KEY before NOT_ACTIVATED', () => {
    expect(decideHeartbeat(null, null, NOW)).toMatchObject({ code: ErrorCode.INVALID_KEY });
    expect(decideHeartbeat(fields, null, NOW)).toMatchObject({ code: ErrorCode.NOT_ACTIVATED });
  });
  it('answers the status and the next deadline; a revoked licence is not valid', () => {
    expect(decideHeartbeat(fields, NOW, NOW)).toEqual({
      status: 'active',
      valid: true,
      code: null,
      heartbeatTimeoutSeconds: 60,
      nextHeartbeatBefore: new Date(NOW.getTime() + 60_000),
    });
    expect(decideHeartbeat({ ...fields, revoked: true }, NOW, NOW)).toMatchObject({ valid: false, code: ErrorCode.KEY_REVOKED });
    expect(decideHeartbeat({ ...fields, heartbeatTimeoutSeconds: null }, NOW, NOW)).toMatchObject({ nextHeartbeatBefore: null });
  });
});
