import { AppError } from '../../src/common/errors/app-error';
import { LicensesRepository } from '../../src/licenses/licenses.repository';
import { RevokeLicense } from '../../src/licenses/use-cases/revoke-license';
import { ADMIN_ACTOR, createServiceHarness, issueLicense, ServiceHarness } from '../support/service-harness';

/**
 * RevokeLicense, the one revoke of every door (docs/architecture.md, Licence use cases): a licence revoked already is
 * left as it is and the use case says so; staff's revoke maps that to 409 ALREADY_REVOKED, a store's to a processed
 * event with a note (docs/stores.md, The ledger). Both leave one audit entry and one domain event.
 */
describe('RevokeLicense (integration)', () => {
  let h: ServiceHarness;
  let revoking: RevokeLicense;

  beforeAll(async () => {
    h = await createServiceHarness();
    revoking = h.get(RevokeLicense);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 60_000);

  const written = async (id: number) => ({
    audit: (await h.sql(`SELECT 1 FROM audit_entries WHERE license_id = $1 AND action = 'license.revoked'`, [id])).length,
    events: (await h.sql(`SELECT 1 FROM event_outbox WHERE license_id = $1 AND type = 'license.revoked'`, [id])).length,
  });
  /** A store's revoke: the licence locked in the event's transaction, then the use case (StoreLicensesService.revoke). */
  const revokeLocked = (id: number, reason: string) =>
    h.transaction(async (manager) => {
      const license = await h.get(LicensesRepository).lockById(id, manager);
      return revoking.revokeIn(manager, license!, reason, ADMIN_ACTOR);
    });

  it('revokes once: the second revoke, through either door, writes nothing and keeps the first reason', async () => {
    const { id } = await issueLicense(h);
    const first = await revokeLocked(id, 'refunded');
    expect(first.outcome).toBe('revoked');
    expect(first.license).toMatchObject({ status: 'revoked', revoke_reason: 'refunded' });
    expect(await written(id)).toEqual({ audit: 1, events: 1 });

    const again = await revokeLocked(id, 'refunded again');
    expect(again).toMatchObject({ outcome: 'already_revoked', license: { revoke_reason: 'refunded' } });
    expect(again.outcome === 'already_revoked' && again.revokedAt?.toISOString()).toBe(first.license.revoked_at);

    const staff = await revoking.revoke(id, 'by staff', ADMIN_ACTOR).catch((err: unknown) => err);
    expect(staff).toBeInstanceOf(AppError);
    expect(staff).toMatchObject({ status: 409, code: 'ALREADY_REVOKED', details: { revoked_at: first.license.revoked_at } });
    expect(await written(id)).toEqual({ audit: 1, events: 1 });
  });

  it("staff's revoke of a live licence: revoked, one entry and one event", async () => {
    const { id } = await issueLicense(h);
    expect(await revoking.revoke(id, 'chargeback', ADMIN_ACTOR)).toMatchObject({ status: 'revoked', revoke_reason: 'chargeback' });
    expect(await written(id)).toEqual({ audit: 1, events: 1 });
  });
});
