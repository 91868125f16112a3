import { ErrorCode } from '../../common/errors/error-codes';
import type { Activation } from './activation.entity';
import type { License } from '../license.entity';
import { decideRelayPool } from './relay-pool-decisions';
import { decideActivation } from './seat-decisions';

const NOW = new Date('2026-06-01T12:00:00Z');
const DAY = 86_400_000;

function licence(overrides: Partial<License> = {}): License {
  return {
    id: 1,
    productId: 2,
    limits: { max_installations: 3 },
    policy: {},
    active: true,
    revoked: false,
    expiresAt: new Date(NOW.getTime() + 300 * DAY),
    graceDays: 7,
    product: { code: 'POS', defaultLimits: { max_installations: 1 }, defaultPolicy: { heartbeat_timeout_seconds: 60 } },
    ...overrides,
  } as License;
}

const seat = (n: number, lastSeenAgoMs = 0): Activation =>
  ({
    id: String(n),
    machineFingerprint: `sha256:${String(n).repeat(64)}`,
    activatedAt: new Date(NOW.getTime() - n * 1000),
    lastSeenAt: new Date(NOW.getTime() - lastSeenAgoMs),
  }) as Activation;

describe("decideRelayPool (docs/relay.md, Seats on the vendor's side)", () => {
  it.each([
    ['unknown key', null, ErrorCode.INVALID_KEY],
    ['revoked', licence({ revoked: true, active: false }), ErrorCode.KEY_REVOKED],
    ['suspended', licence({ active: false }), ErrorCode.KEY_SUSPENDED],
    ['expired', licence({ expiresAt: new Date(NOW.getTime() - 10 * DAY), graceDays: 1 }), ErrorCode.KEY_EXPIRED],
  ] as const)('%s: %s', (_label, lic, code) => {
    const decision = decideRelayPool(lic, [], 0, 1, 30, NOW);
    expect(decision.kind === 'deny' && decision.error.code).toBe(code);
  });

  it('counts live bound seats and other pools; dead seats are free', () => {
    expect(decideRelayPool(licence(), [seat(1)], 1, 1, 30, NOW).kind).toBe('hold');
    const full = decideRelayPool(licence(), [seat(1)], 1, 2, 30, NOW);
    expect(full.kind === 'deny' && full.error).toMatchObject({
      code: ErrorCode.ACTIVATION_LIMIT_REACHED,
      details: { requested: 2, available: 1, max_installations: 3 },
    });
    expect(decideRelayPool(licence(), [seat(1, 120_000), seat(2, 120_000)], 0, 3, 30, NOW).kind).toBe('hold');
  });

  it('lasts ttl_days, never past the end of the grace period', () => {
    expect(decideRelayPool(licence(), [], 0, 1, 30, NOW)).toEqual({ kind: 'hold', expiresAt: new Date(NOW.getTime() + 30 * DAY) });
    const ending = licence({ expiresAt: new Date(NOW.getTime() + 2 * DAY), graceDays: 1 });
    expect(decideRelayPool(ending, [], 0, 1, 30, NOW)).toEqual({ kind: 'hold', expiresAt: new Date(NOW.getTime() + 3 * DAY) });
    expect(decideRelayPool(licence({ expiresAt: null }), [], 0, 1, 365, NOW)).toEqual({
      kind: 'hold',
      expiresAt: new Date(NOW.getTime() + 365 * DAY),
    });
  });

  it('activation counts pooled seats like bound ones', () => {
    const request = { licenseKey: 'K', machineFingerprint: `sha256:${'9'.repeat(64)}`, hostname: 'h' };
    expect(decideActivation(licence(), [seat(1)], request, NOW, 1).kind).toBe('bind');
    const denied = decideActivation(licence(), [seat(1)], request, NOW, 2);
    expect(denied.kind === 'deny' && denied.error).toMatchObject({ code: ErrorCode.ALREADY_ACTIVATED, details: { relay_pool_seats: 2 } });
  });
});
