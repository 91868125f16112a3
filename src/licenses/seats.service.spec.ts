import type { DataSource, EntityManager } from 'typeorm';
import type { AuditService } from '../audit/audit.service';
import type { Actor } from '../common/auth/actor';
import { type Activation, CURRENT_SEAT_INDEX } from './activation.entity';
import type { License } from './license.entity';
import type { LicensesRepository } from './licenses.repository';
import type { SeatsRepository } from './seats.repository';
import { SeatsService } from './seats.service';

/** The race fallback, which the licence lock keeps out of reach of e2e tests: a duplicate seat insert becomes a re-activation. */
describe('SeatsService.activateSeat on a unique violation', () => {
  const actor: Actor = { type: 'client', name: '203.0.113.9', ip: '203.0.113.9' };
  const license = {
    id: 7,
    licenseKey: 'POS-1',
    limits: {},
    active: true,
    revoked: false,
    expiresAt: null,
    graceDays: 7,
    product: { code: 'POS_RETAIL', defaultLimits: { max_installations: 1 } },
  } as unknown as License;
  const fp = 'sha256:' + 'b'.repeat(64);
  const seat = { id: '5', licenseId: 7, machineFingerprint: fp, activatedAt: new Date(), lastSeenAt: new Date() } as Activation;

  function setup(insert: jest.Mock) {
    const manager = {} as EntityManager;
    const dataSource = { transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager) } as unknown as DataSource;
    let attempts = 0;
    const seats = {
      // The first attempt sees no seat; the retry sees the one the other request inserted.
      listCurrent: jest.fn(async () => (attempts++ > 0 ? [seat] : [])),
      insert,
      refresh: jest.fn(async () => seat),
    };
    const audit = { record: jest.fn(async () => undefined) };
    const licenses = { lockByKey: jest.fn(async () => license) };
    const service = new SeatsService(
      dataSource,
      licenses as unknown as LicensesRepository,
      seats as unknown as SeatsRepository,
      audit as unknown as AuditService,
    );
    return { service, seats, audit };
  }

  it('retries once and answers as a re-activation of the seat that won', async () => {
    const duplicate = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
      constraint: CURRENT_SEAT_INDEX,
    });
    const { service, seats } = setup(jest.fn().mockRejectedValueOnce(duplicate));
    const result = await service.activateSeat({ licenseKey: 'POS-1', machineFingerprint: fp, hostname: 'h' }, actor);
    expect(result).toEqual({ license, seat, created: false });
    expect(seats.refresh).toHaveBeenCalledTimes(1);
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
    const { service, seats } = setup(jest.fn().mockRejectedValueOnce(other));
    await expect(service.activateSeat({ licenseKey: 'POS-1', machineFingerprint: fp, hostname: 'h' }, actor)).rejects.toBe(other);
    expect(seats.refresh).not.toHaveBeenCalled();
  });
});
