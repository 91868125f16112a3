import type { DataSource, EntityManager } from 'typeorm';
import type { EventRecorder } from '../events/event-recorder';
import type { Actor } from '../common/auth/actor';
import { type Activation, CURRENT_SEAT_INDEX } from './activation.entity';
import type { License } from './license.entity';
import type { LicensesRepository } from './licenses.repository';
import type { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';

/** The race fallback, which the licence lock keeps out of reach of e2e tests: a duplicate seat insert becomes a re-activation. */
describe('SeatsService.activateSeat on a unique violation', () => {
  const actor: Actor = { type: 'client', name: '203.0.113.9', ip: '203.0.113.9' };
  const now = new Date('2026-01-01T00:00:00Z');
  const license = {
    id: 7,
    productId: 3,
    licenseKey: 'POS-1',
    licenseType: 'YEARLY',
    limits: {},
    features: [],
    policy: {},
    active: true,
    revoked: false,
    expiresAt: null,
    graceDays: 7,
    createdAt: now,
    updatedAt: now,
    product: { code: 'POS_RETAIL', name: 'POS', defaultLimits: { max_installations: 1 }, defaultPolicy: {} },
  } as unknown as License;
  const fp = 'sha256:' + 'b'.repeat(64);
  const seatRow = { id: '5', license_id: 7, product_id: 3, machine_fingerprint: fp, activated_at: now, last_seen_at: now };
  const seat = { id: '5', licenseId: 7, machineFingerprint: fp, activatedAt: now, lastSeenAt: now } as Activation;

  function setup(bind: jest.Mock) {
    const manager = {} as EntityManager;
    const dataSource = { manager, transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager) } as unknown as DataSource;
    let attempts = 0;
    const seats = {
      // The first attempt sees no seat; the retry sees the one the other request inserted.
      loadForSeatChange: jest.fn(async () => ({
        license,
        seats: attempts++ > 0 ? [seat] : [],
        recentDeactivations: [],
        now,
        nextSeatId: '9',
        version: '100',
      })),
    };
    const events = {
      recordWith: jest.fn(async (_m: unknown, change: { name: string }) => (change.name === 'seat-bind-guarded' ? bind() : [seatRow])),
    };
    const service = new SeatsService(
      dataSource,
      {} as LicensesRepository,
      seats as unknown as SeatsRepository,
      events as unknown as EventRecorder,
    );
    return { service, events };
  }

  const changes = (events: { recordWith: jest.Mock }) => events.recordWith.mock.calls.map((c) => (c[1] as { name: string }).name);

  it('retries once and answers as a re-activation of the seat that won', async () => {
    const duplicate = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      constraint: CURRENT_SEAT_INDEX,
    });
    const { service, events } = setup(jest.fn().mockRejectedValueOnce(duplicate));
    const result = await service.activateSeat({ licenseKey: 'POS-1', machineFingerprint: fp, hostname: 'h' }, actor);
    expect(result).toMatchObject({ license, seat: { id: '5', machineFingerprint: fp }, created: false });
    expect(changes(events)).toEqual(['seat-bind-guarded', 'seat-refresh-live']);
  });

  it('lets any other error through', async () => {
    const { service } = setup(jest.fn().mockRejectedValueOnce(new Error('boom')));
    await expect(service.activateSeat({ licenseKey: 'POS-1', machineFingerprint: fp, hostname: 'h' }, actor)).rejects.toThrow('boom');
  });

  it('does not retry a unique violation of another constraint', async () => {
    const other = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      constraint: 'some_other_key',
    });
    const { service, events } = setup(jest.fn().mockRejectedValueOnce(other));
    await expect(service.activateSeat({ licenseKey: 'POS-1', machineFingerprint: fp, hostname: 'h' }, actor)).rejects.toBe(other);
    expect(changes(events)).toEqual(['seat-bind-guarded']);
  });
});
