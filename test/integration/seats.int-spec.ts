import { AppError } from '../../src/common/errors/app-error';
import { SeatsService } from '../../src/licenses/seats/seats.service';
import { type SeatChangeLoad, SeatsRepository } from '../../src/licenses/seats/seats.repository';
import { CLIENT_ACTOR, createServiceHarness, issueLicense, machine, ServiceHarness } from '../support/service-harness';

/**
 * Seat rules through SeatsService on real PostgreSQL (docs/licences.md, Seat policies: node-locked and floating seats). The decisions read the
 * database's clock, so a test moves time by moving the seat's timestamps back, never by waiting.
 */
describe('SeatsService (integration)', () => {
  let h: ServiceHarness;
  let seats: SeatsService;

  beforeAll(async () => {
    h = await createServiceHarness();
    seats = h.get(SeatsService);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 60_000);

  const activate = (licenseKey: string, seed: string) =>
    seats.activateSeat({ licenseKey, machineFingerprint: machine(seed), hostname: `host-${seed}` }, CLIENT_ACTOR);
  const deactivate = (licenseKey: string, seed: string) =>
    seats.deactivateSeat({ licenseKey, machineFingerprint: machine(seed) }, CLIENT_ACTOR);
  const failure = async (work: Promise<unknown>): Promise<AppError> => {
    const err = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
    return err;
  };
  const liveSeats = async (licenseId: number) =>
    (await h.sql(`SELECT machine_fingerprint FROM activations WHERE license_id = $1 AND released_at IS NULL ORDER BY id`, [licenseId])).map(
      (r) => r.machine_fingerprint as string,
    );
  /** Moves a seat's last heartbeat `seconds` into the past. */
  const silence = (licenseId: number, seed: string, seconds: number) =>
    h.sql(`UPDATE activations SET last_seen_at = now() - make_interval(secs => $3) WHERE license_id = $1 AND machine_fingerprint = $2`, [
      licenseId,
      machine(seed),
      seconds,
    ]);

  describe('seat limit', () => {
    it('binds machines up to max_installations; the next one is refused with ALREADY_ACTIVATED naming the limit, and its denial is audited', async () => {
      const lic = await issueLicense(h, { limits: { max_installations: 2 } });
      expect((await activate(lic.licenseKey, 'limit-a')).created).toBe(true);
      expect((await activate(lic.licenseKey, 'limit-b')).created).toBe(true);
      const err = await failure(activate(lic.licenseKey, 'limit-c'));
      expect(err.code).toBe('ALREADY_ACTIVATED');
      expect(err.details).toMatchObject({ max_installations: 2, activated_on: 'host-limit-b' });
      expect(await liveSeats(lic.id)).toEqual([machine('limit-a'), machine('limit-b')]);
      // The denial is thrown after its transaction committed the audit entry.
      const denied = await h.sql(`SELECT details FROM audit_entries WHERE license_id = $1 AND action = 'license.activation_denied'`, [
        lic.id,
      ]);
      expect(denied.map((d) => (d.details as { code: string }).code)).toEqual(['ALREADY_ACTIVATED']);
    });

    it('attacker: ten machines racing for the one seat of a licence bind exactly one', async () => {
      const lic = await issueLicense(h);
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => activate(lic.licenseKey, `race-${i}`)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as AppError).code] : []));
      expect(refused).toEqual(Array(9).fill('ALREADY_ACTIVATED'));
      expect(await liveSeats(lic.id)).toHaveLength(1);
    });

    it('the machine that holds the seat re-activates into the same seat (created false), whatever the limit', async () => {
      const lic = await issueLicense(h);
      const first = await activate(lic.licenseKey, 'again');
      await silence(lic.id, 'again', 120);
      const second = await activate(lic.licenseKey, 'again');
      expect(second.created).toBe(false);
      expect(second.seat.id).toBe(first.seat.id);
      const [{ fresh }] = await h.sql(`SELECT now() - last_seen_at < interval '30 seconds' AS fresh FROM activations WHERE id = $1`, [
        second.seat.id,
      ]);
      expect(fresh).toBe(true);
      expect(await liveSeats(lic.id)).toEqual([machine('again')]);
    });

    it('attacker: a suspended licence binds no seat (KEY_SUSPENDED), even for a machine that never had one', async () => {
      const lic = await issueLicense(h);
      await h.sql(`UPDATE licenses SET active = false WHERE id = $1`, [lic.id]);
      expect((await failure(activate(lic.licenseKey, 'suspended'))).code).toBe('KEY_SUSPENDED');
      expect(await liveSeats(lic.id)).toEqual([]);
    });
  });

  describe('floating seats (heartbeat timeout)', () => {
    it('a seat silent past the timeout is released by the next activation, which takes its place; the release is the system’s', async () => {
      const lic = await issueLicense(h, { policy: { heartbeat_timeout_seconds: 60 } });
      await activate(lic.licenseKey, 'float-old');
      await silence(lic.id, 'float-old', 61);
      const bound = await activate(lic.licenseKey, 'float-new');
      expect(bound.created).toBe(true);
      expect(await liveSeats(lic.id)).toEqual([machine('float-new')]);
      const [old] = await h.sql(`SELECT release_reason FROM activations WHERE license_id = $1 AND machine_fingerprint = $2`, [
        lic.id,
        machine('float-old'),
      ]);
      expect(old.release_reason).toBe('heartbeat_timeout');
      const released = await h.sql(`SELECT actor_type, details FROM audit_entries WHERE license_id = $1 AND action = 'license.released'`, [
        lic.id,
      ]);
      expect(released).toEqual([{ actor_type: 'system', details: expect.objectContaining({ reason: 'heartbeat_timeout', released: 1 }) }]);
    });

    it('a seat silent for less than the timeout still counts: the other machine is refused', async () => {
      const lic = await issueLicense(h, { policy: { heartbeat_timeout_seconds: 60 } });
      await activate(lic.licenseKey, 'float-live');
      await silence(lic.id, 'float-live', 50);
      expect((await failure(activate(lic.licenseKey, 'float-other'))).code).toBe('ALREADY_ACTIVATED');
      expect(await liveSeats(lic.id)).toEqual([machine('float-live')]);
    });

    it('a heartbeat refreshes a live seat and answers when the next one is due (last_seen_at + timeout)', async () => {
      const lic = await issueLicense(h, { policy: { heartbeat_timeout_seconds: 300 } });
      await activate(lic.licenseKey, 'beat');
      await silence(lic.id, 'beat', 200);
      const beat = await seats.heartbeat({ licenseKey: lic.licenseKey, machineFingerprint: machine('beat') });
      expect(beat).toMatchObject({ status: 'active', valid: true, code: null, heartbeatTimeoutSeconds: 300 });
      const [{ last_seen_at }] = await h.sql(`SELECT last_seen_at FROM activations WHERE license_id = $1`, [lic.id]);
      expect(Date.now() - (last_seen_at as Date).getTime()).toBeLessThan(30_000);
      expect(beat.nextHeartbeatBefore?.getTime()).toBe((last_seen_at as Date).getTime() + 300_000);
    });

    it('attacker: a heartbeat cannot revive a dead seat (NOT_ACTIVATED), so a released machine must activate again', async () => {
      const lic = await issueLicense(h, { policy: { heartbeat_timeout_seconds: 60 } });
      await activate(lic.licenseKey, 'zombie');
      await silence(lic.id, 'zombie', 61);
      const err = await failure(seats.heartbeat({ licenseKey: lic.licenseKey, machineFingerprint: machine('zombie') }));
      expect(err.code).toBe('NOT_ACTIVATED');
      const [{ silent }] = await h.sql(
        `SELECT now() - last_seen_at > interval '60 seconds' AS silent FROM activations WHERE license_id = $1`,
        [lic.id],
      );
      expect(silent).toBe(true);
    });

    it('the sweep releases only dead seats, once each, even with two sweeps at the same moment, and records each released seat once', async () => {
      const a = await issueLicense(h, { limits: { max_installations: 3 }, policy: { heartbeat_timeout_seconds: 60 } });
      const b = await issueLicense(h, { policy: { heartbeat_timeout_seconds: 60 } });
      for (const seed of ['sw-a1', 'sw-a2', 'sw-a3']) await activate(a.licenseKey, seed);
      await activate(b.licenseKey, 'sw-b1');
      // The sweep takes every licence's dead seats: first those earlier tests left behind.
      await seats.sweepDeadSeats(1_000);
      await silence(a.id, 'sw-a1', 120);
      await silence(a.id, 'sw-a2', 120);
      await silence(b.id, 'sw-b1', 120);
      const [one, two] = await Promise.all([seats.sweepDeadSeats(100), seats.sweepDeadSeats(100)]);
      expect(one.released + two.released).toBe(3);
      expect(await liveSeats(a.id)).toEqual([machine('sw-a3')]);
      expect(await liveSeats(b.id)).toEqual([]);
      const released = await h.sql(
        // Two sweeps at once may split one licence's dead seats between them (SKIP LOCKED): count seats, not entries.
        `SELECT license_id, sum((details->>'released')::int)::int AS n FROM audit_entries
         WHERE action = 'license.released' AND license_id = ANY($1) GROUP BY license_id ORDER BY license_id`,
        [[a.id, b.id]],
      );
      expect(released).toEqual([
        { license_id: a.id, n: 2 },
        { license_id: b.id, n: 1 },
      ]);
      expect((await seats.sweepDeadSeats(100)).released).toBe(0);
    });
  });

  describe('deactivation', () => {
    it('releases the machine’s seat as deactivated, and the licence can bind another machine at once', async () => {
      const lic = await issueLicense(h);
      await activate(lic.licenseKey, 'deact-a');
      const released = await deactivate(lic.licenseKey, 'deact-a');
      expect(released.canReactivate).toBe(true);
      const [row] = await h.sql(`SELECT release_reason FROM activations WHERE license_id = $1`, [lic.id]);
      expect(row.release_reason).toBe('deactivated');
      expect((await activate(lic.licenseKey, 'deact-b')).created).toBe(true);
    });

    it('attacker: a machine without a seat of the licence cannot release another machine’s seat (NOT_ACTIVATED)', async () => {
      const lic = await issueLicense(h);
      await activate(lic.licenseKey, 'owner');
      expect((await failure(deactivate(lic.licenseKey, 'stranger'))).code).toBe('NOT_ACTIVATED');
      expect(await liveSeats(lic.id)).toEqual([machine('owner')]);
    });

    it('max_deactivations_per_30_days: the next deactivation is refused, with when it is allowed again (the oldest + 30 days)', async () => {
      const lic = await issueLicense(h, { policy: { max_deactivations_per_30_days: 1 } });
      await activate(lic.licenseKey, 'lim-a');
      await deactivate(lic.licenseKey, 'lim-a');
      await activate(lic.licenseKey, 'lim-b');
      const err = await failure(deactivate(lic.licenseKey, 'lim-b'));
      expect(err.code).toBe('DEACTIVATION_LIMIT_REACHED');
      const [{ released_at }] = await h.sql(`SELECT released_at FROM activations WHERE license_id = $1 AND machine_fingerprint = $2`, [
        lic.id,
        machine('lim-a'),
      ]);
      expect(err.details).toEqual({
        max_deactivations_per_30_days: 1,
        deactivations_last_30_days: 1,
        next_allowed_at: new Date((released_at as Date).getTime() + 30 * 86_400_000).toISOString(),
      });
      expect(await liveSeats(lic.id)).toEqual([machine('lim-b')]);
    });

    it('a deactivation older than 30 days no longer counts against the limit', async () => {
      const lic = await issueLicense(h, { policy: { max_deactivations_per_30_days: 1 } });
      await activate(lic.licenseKey, 'old-a');
      await deactivate(lic.licenseKey, 'old-a');
      await h.sql(`UPDATE activations SET released_at = now() - interval '31 days' WHERE license_id = $1 AND released_at IS NOT NULL`, [
        lic.id,
      ]);
      await activate(lic.licenseKey, 'old-b');
      await expect(deactivate(lic.licenseKey, 'old-b')).resolves.toMatchObject({ canReactivate: true });
    });

    it('attacker: parallel deactivations cannot all slip under the limit (one of three machines is released)', async () => {
      const lic = await issueLicense(h, { limits: { max_installations: 3 }, policy: { max_deactivations_per_30_days: 1 } });
      for (const seed of ['par-a', 'par-b', 'par-c']) await activate(lic.licenseKey, seed);
      const outcomes = await Promise.allSettled(['par-a', 'par-b', 'par-c'].map((seed) => deactivate(lic.licenseKey, seed)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as AppError).code] : []));
      expect(refused).toEqual(['DEACTIVATION_LIMIT_REACHED', 'DEACTIVATION_LIMIT_REACHED']);
      expect(await liveSeats(lic.id)).toHaveLength(2);
    });

    it('deactivating a revoked licence’s seat frees it but answers canReactivate false, and activation stays refused', async () => {
      const lic = await issueLicense(h);
      await activate(lic.licenseKey, 'rev');
      await h.sql(`UPDATE licenses SET revoked = true, revoked_at = now() WHERE id = $1`, [lic.id]);
      const released = await deactivate(lic.licenseKey, 'rev');
      expect(released.canReactivate).toBe(false);
      expect((await failure(activate(lic.licenseKey, 'rev'))).code).toBe('KEY_REVOKED');
    });
  });

  describe('the seat change load', () => {
    it('the optimistic read (one plain statement) loads what the locked function loads: licence, product, seats, recent deactivations', async () => {
      const lic = await issueLicense(h, { limits: { max_installations: 3 } });
      for (const seed of ['twin-a', 'twin-b', 'twin-c']) await activate(lic.licenseKey, seed);
      await deactivate(lic.licenseKey, 'twin-b');
      await h.sql(`UPDATE activations SET last_seen_at = now() - interval '5 minutes' WHERE license_id = $1`, [lic.id]);
      const repo = h.get(SeatsRepository);
      const [read, locked] = await h.transaction(async (manager) => [
        await repo.loadForSeatChange(lic.licenseKey, manager, false),
        await repo.loadForSeatChange(lic.licenseKey, manager, true),
      ]);
      const comparable = (load: SeatChangeLoad | null) => {
        if (!load) throw new Error('no load');
        const { now: _now, nextSeatId, version, ...rest } = load;
        return { ...rest, nextSeatId: typeof nextSeatId, version: typeof version };
      };
      expect(comparable(read)).toEqual(comparable(locked));
      expect(read?.seats.map((s) => s.machineFingerprint)).toEqual([machine('twin-c'), machine('twin-a')]);
      expect(read?.recentDeactivations).toHaveLength(1);
      expect(read?.license.product?.code).toBe(locked?.license.product?.code);
      // The locked load moves the seat counter; the read saw it before.
      expect(BigInt(locked?.version ?? 0)).toBe(BigInt(read?.version ?? 0) + 1n);
      expect(Number(locked?.nextSeatId)).toBeGreaterThan(Number(read?.nextSeatId));
      expect(await h.transaction((manager) => repo.loadForSeatChange('POS-NONE0-NONE0-NONE0-NONE0', manager, false))).toBeNull();
    });
  });
});
