import { SeatSweepService } from '../src/licenses/seats/seat-sweep.service';
import { fieldsOf } from './support/api-errors';
import { createLicense, fingerprint, insertSeat } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/** docs/licences.md, Seat policies: seat policies in the admin API, heartbeats, dead seats at activation, deactivation limits. */
describe('seat policies', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A long sweep interval: dead seats here are released by activations (the sweep has its own spec).
    t = await createTestApp({ seatSweepIntervalSeconds: 45 });
    await t.app.listen(0);
  }, 60_000);
  afterAll(() => t.close());

  const client = (path: string, body: Record<string, unknown>) => t.http().post(`/api/v1/${path}`).send(body);
  const activate = (key: string, machine: string) =>
    client('activate', { license_key: key, machine_fingerprint: fingerprint(machine), hostname: machine });
  const seatBody = (key: string, machine: string) => ({ license_key: key, machine_fingerprint: fingerprint(machine) });
  const floating = (policy: Record<string, number | null> = {}, seats = 1) =>
    createLicense(t, { limits: { max_installations: seats }, policy: { heartbeat_timeout_seconds: 10, ...policy } });
  /** A machine silent for `seconds` (by the database clock that decides death). */
  const silence = (licenseId: number, machine: string, seconds: number) =>
    t.sql(`UPDATE activations SET last_seen_at = now() - make_interval(secs => $3) WHERE license_id = $1 AND machine_fingerprint = $2`, [
      licenseId,
      fingerprint(machine),
      seconds,
    ]);
  const currentSeats = async (licenseId: number) =>
    (
      await t.sql<{ machine_fingerprint: string }>(
        'SELECT machine_fingerprint FROM activations WHERE license_id = $1 AND released_at IS NULL ORDER BY machine_fingerprint',
        [licenseId],
      )
    ).map((r) => r.machine_fingerprint);

  describe('policy in the admin API', () => {
    it('products: default_policy is stored, shown with every key, changed key by key, and bounded', async () => {
      const created = await t.admin
        .post('/api/v1/admin/products')
        .send({ code: 'FLOAT_APP', name: 'Floating app', key_prefix: 'FLT', default_policy: { heartbeat_timeout_seconds: 600 } })
        .expect(201);
      expect(created.body.default_policy).toEqual({
        heartbeat_timeout_seconds: 600,
        max_deactivations_per_30_days: null,
        license_file_ttl_days: 30,
        max_uses: null,
        uses_period: 'none',
      });
      const updated = await t.admin
        .put(`/api/v1/admin/products/${created.body.id}`)
        .send({ default_policy: { max_deactivations_per_30_days: 2 } })
        .expect(200);
      expect(updated.body.default_policy).toEqual({
        heartbeat_timeout_seconds: 600,
        max_deactivations_per_30_days: 2,
        license_file_ttl_days: 30,
        max_uses: null,
        uses_period: 'none',
      });
      const cleared = await t.admin
        .put(`/api/v1/admin/products/${created.body.id}`)
        .send({ default_policy: { heartbeat_timeout_seconds: null } })
        .expect(200);
      expect(cleared.body.default_policy.heartbeat_timeout_seconds).toBeNull();

      for (const bad of [
        { heartbeat_timeout_seconds: 9 },
        { heartbeat_timeout_seconds: 604_801 },
        { heartbeat_timeout_seconds: '60' },
        { max_deactivations_per_30_days: 1001 },
        { license_file_ttl_days: 0 },
        { license_file_ttl_days: null },
        { grace_period: 3 },
      ]) {
        const res = await t.admin.put(`/api/v1/admin/products/${created.body.id}`).send({ default_policy: bad }).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(fieldsOf(res.body)).toEqual(['default_policy']);
      }
      const res = await t.admin.put(`/api/v1/admin/products/${created.body.id}`).send({ default_policy: null }).expect(400);
      expect(fieldsOf(res.body)).toEqual(['default_policy']);
    });

    it('licences: overrides over the product defaults, null clears one, unknown keys and bad values are 400', async () => {
      const lic = await createLicense(t, { policy: { heartbeat_timeout_seconds: 300, max_deactivations_per_30_days: 3 } });
      const got = await t.admin.get(`/api/v1/admin/licenses/${lic.id}`).expect(200);
      expect(got.body.policy).toEqual({
        heartbeat_timeout_seconds: 300,
        max_deactivations_per_30_days: 3,
        license_file_ttl_days: 30,
        max_uses: null,
        uses_period: 'none',
      });
      expect(got.body.policy_overrides).toEqual({ heartbeat_timeout_seconds: 300, max_deactivations_per_30_days: 3 });

      const put = await t.admin
        .put(`/api/v1/admin/licenses/${lic.id}`)
        .send({ policy: { heartbeat_timeout_seconds: null, license_file_ttl_days: 90 } })
        .expect(200);
      expect(put.body.policy).toEqual({
        heartbeat_timeout_seconds: null,
        max_deactivations_per_30_days: 3,
        license_file_ttl_days: 90,
        max_uses: null,
        uses_period: 'none',
      });
      expect(put.body.policy_overrides).toEqual({ max_deactivations_per_30_days: 3, license_file_ttl_days: 90 });
      const [audit] = await t.sql(
        `SELECT details FROM audit_entries WHERE license_id = $1 AND action = 'license.updated' ORDER BY id DESC LIMIT 1`,
        [lic.id],
      );
      expect(audit.details.changes.policy).toEqual({
        from: { heartbeat_timeout_seconds: 300, max_deactivations_per_30_days: 3 },
        to: { license_file_ttl_days: 90, max_deactivations_per_30_days: 3 },
      });

      for (const bad of [{ heartbeat_timeout_seconds: 5 }, { max_deactivations_per_30_days: -1 }, { seats: 2 }, 'strict', [1]]) {
        const res = await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ policy: bad }).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(fieldsOf(res.body)).toEqual(['policy']);
      }
      const res = await t.admin
        .post('/api/v1/admin/licenses')
        .send({ product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'X', policy: { heartbeat: 10 } })
        .expect(400);
      expect(res.body.error.details.fields).toEqual([{ field: 'policy', message: expect.stringMatching(/unknown key "heartbeat"/) }]);
    });

    it('the signed payload carries the merged policy as license.policy', async () => {
      const lic = await floating({ max_deactivations_per_30_days: 1 });
      const res = await activate(lic.license_key, 'payload-machine').expect(200);
      expect(res.body.license.policy).toEqual({
        heartbeat_timeout_seconds: 10,
        max_deactivations_per_30_days: 1,
        license_file_ttl_days: 30,
        max_uses: null,
        uses_period: 'none',
      });
    });
  });

  describe('POST /api/v1/heartbeat', () => {
    it('400 INVALID_KEY for an unknown key, VALIDATION_ERROR for a bad body, NOT_ACTIVATED without a seat', async () => {
      expect((await client('heartbeat', seatBody('POS-00000-00000-00000-00000', 'x')).expect(400)).body.error.code).toBe('INVALID_KEY');
      const bad = await client('heartbeat', { license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: 'nope' }).expect(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
      const lic = await floating();
      expect((await client('heartbeat', seatBody(lic.license_key, 'never-activated')).expect(400)).body.error.code).toBe('NOT_ACTIVATED');
    });

    it('refreshes last_seen_at on every call and tells when the next one is due', async () => {
      const lic = await floating();
      await activate(lic.license_key, 'beating').expect(200);
      await silence(lic.id, 'beating', 5);
      const res = await client('heartbeat', seatBody(lic.license_key, 'beating')).expect(200);
      const [seat] = await t.sql<{ last_seen_at: Date; age: number }>(
        `SELECT last_seen_at, extract(epoch FROM now() - last_seen_at) AS age FROM activations WHERE license_id = $1 AND released_at IS NULL`,
        [lic.id],
      );
      expect(Number(seat.age)).toBeLessThan(2);
      expect(res.body).toEqual({
        valid: true,
        status: 'active',
        code: null,
        heartbeat_timeout_seconds: 10,
        next_heartbeat_before: new Date(seat.last_seen_at.getTime() + 10_000).toISOString(),
      });
      // Every call writes, unlike validate's LAST_SEEN_INTERVAL: two calls a second apart leave two different times.
      await new Promise((r) => setTimeout(r, 1100));
      await client('heartbeat', seatBody(lic.license_key, 'beating')).expect(200);
      const [again] = await t.sql<{ last_seen_at: Date }>(
        `SELECT last_seen_at FROM activations WHERE license_id = $1 AND released_at IS NULL`,
        [lic.id],
      );
      expect(again.last_seen_at.getTime()).toBeGreaterThan(seat.last_seen_at.getTime() + 1000);
    });

    it('node-locked seats never die: heartbeat_timeout_seconds and next_heartbeat_before are null', async () => {
      const lic = await createLicense(t);
      await activate(lic.license_key, 'node-locked').expect(200);
      await silence(lic.id, 'node-locked', 86_400 * 30);
      const res = await client('heartbeat', seatBody(lic.license_key, 'node-locked')).expect(200);
      expect(res.body).toMatchObject({ valid: true, heartbeat_timeout_seconds: null, next_heartbeat_before: null });
    });

    it('a bound machine of a revoked licence gets 200 with valid false and KEY_REVOKED', async () => {
      const lic = await floating();
      await activate(lic.license_key, 'revoked-one').expect(200);
      await t.admin.post(`/api/v1/admin/licenses/${lic.id}/revoke`).send({ reason: 'test' }).expect(200);
      const res = await client('heartbeat', seatBody(lic.license_key, 'revoked-one')).expect(200);
      expect(res.body).toMatchObject({ valid: false, status: 'revoked', code: 'KEY_REVOKED' });
    });

    it('after release (by staff, or death) heartbeat and validate answer NOT_ACTIVATED; the machine may activate again', async () => {
      const lic = await floating({}, 2);
      await activate(lic.license_key, 'released').expect(200);
      await t.admin
        .post(`/api/v1/admin/licenses/${lic.id}/release`)
        .send({ machine_fingerprint: fingerprint('released') })
        .expect(200);
      expect((await client('heartbeat', seatBody(lic.license_key, 'released')).expect(400)).body.error.code).toBe('NOT_ACTIVATED');

      await activate(lic.license_key, 'dead').expect(200);
      await silence(lic.id, 'dead', 11);
      // Dead but maybe not swept yet: dead is dead, and a heartbeat does not bring it back.
      expect((await client('heartbeat', seatBody(lic.license_key, 'dead')).expect(400)).body.error.code).toBe('NOT_ACTIVATED');
      const validated = await client('validate', seatBody(lic.license_key, 'dead')).expect(200);
      expect(validated.body).toMatchObject({ valid: false, code: 'NOT_ACTIVATED' });
      await activate(lic.license_key, 'dead').expect(200);
      expect((await client('heartbeat', seatBody(lic.license_key, 'dead')).expect(200)).body.valid).toBe(true);
    });
  });

  describe('dead seats at activation', () => {
    it('a silent machine loses its seat to a new machine at once, released as heartbeat_timeout by the system', async () => {
      const lic = await floating();
      await activate(lic.license_key, 'old-laptop').expect(200);
      await silence(lic.id, 'old-laptop', 9);
      // Not dead yet (9 s < 10 s): the seat is still taken.
      expect((await activate(lic.license_key, 'new-laptop').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
      await silence(lic.id, 'old-laptop', 11);
      await activate(lic.license_key, 'new-laptop').expect(200);
      expect(await currentSeats(lic.id)).toEqual([fingerprint('new-laptop')]);
      const [old] = await t.sql(`SELECT release_reason, released_at FROM activations WHERE license_id = $1 AND machine_fingerprint = $2`, [
        lic.id,
        fingerprint('old-laptop'),
      ]);
      expect(old.release_reason).toBe('heartbeat_timeout');
      const audit = await t.sql(
        `SELECT action, actor_type, details FROM audit_entries WHERE license_id = $1 AND action IN ('license.released', 'license.activated') ORDER BY id`,
        [lic.id],
      );
      expect(audit.map((a) => [a.action, a.actor_type])).toEqual([
        ['license.activated', 'client'],
        ['license.released', 'system'],
        ['license.activated', 'client'],
      ]);
      expect(audit[1].details).toMatchObject({
        machine_fingerprints: [fingerprint('old-laptop')],
        released: 1,
        reason: 'heartbeat_timeout',
      });
    });

    it('seats of a licence without a heartbeat timeout never die', async () => {
      const lic = await createLicense(t);
      await activate(lic.license_key, 'forever').expect(200);
      await silence(lic.id, 'forever', 86_400 * 365);
      expect((await activate(lic.license_key, 'other').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
      expect((await client('validate', seatBody(lic.license_key, 'forever')).expect(200)).body.valid).toBe(true);
    });

    it('50 machines race for 5 floating seats held by 5 dead ones (with sweeps running): exactly 5 bound, each dead seat released once', async () => {
      const lic = await floating({}, 5);
      const dead: string[] = [];
      for (let i = 0; i < 5; i++) {
        const old = new Date(Date.now() - 60_000);
        dead.push(
          (await insertSeat(t, lic.id, { machine_fingerprint: fingerprint(`dead-${i}`), activated_at: old, last_seen_at: old }))
            .machine_fingerprint,
        );
      }
      const sweeper = t.app.get(SeatSweepService);
      const machines = Array.from({ length: 50 }, (_, i) => `racer-${i}`);
      const [results] = await Promise.all([
        Promise.all(machines.map((m) => activate(lic.license_key, m))),
        sweeper.sweep(),
        sweeper.sweep(),
      ]);
      const winners = results.filter((r) => r.status === 200).map((r) => r.body.license.machine_fingerprint as string);
      expect(winners).toHaveLength(5);
      expect(results.filter((r) => r.status !== 200).map((r) => r.body.error.code)).toEqual(Array(45).fill('ALREADY_ACTIVATED'));
      expect(await currentSeats(lic.id)).toEqual([...winners].sort());

      const deadRows = await t.sql(`SELECT release_reason FROM activations WHERE license_id = $1 AND machine_fingerprint = ANY($2)`, [
        lic.id,
        dead,
      ]);
      expect(deadRows.map((r) => r.release_reason)).toEqual(Array(5).fill('heartbeat_timeout'));
      const releases = await t.sql<{ actor_type: string; details: { machine_fingerprints: string[]; released: number } }>(
        `SELECT actor_type, details FROM audit_entries WHERE license_id = $1 AND action = 'license.released'`,
        [lic.id],
      );
      const released = releases.flatMap((r) => r.details.machine_fingerprints).sort();
      expect(released).toEqual([...dead].sort());
      expect(releases.every((r) => r.actor_type === 'system' && r.details.released === r.details.machine_fingerprints.length)).toBe(true);
      const [counts] = await t.sql(
        `SELECT count(*) FILTER (WHERE action = 'license.activated')::int AS activated,
                count(*) FILTER (WHERE action = 'license.activation_denied')::int AS denied
         FROM audit_entries WHERE license_id = $1`,
        [lic.id],
      );
      expect(counts).toEqual({ activated: 5, denied: 45 });
    });
  });

  describe('max_deactivations_per_30_days', () => {
    it('allows exactly the limit, then 400 DEACTIVATION_LIMIT_REACHED with next_allowed_at; the seat stays bound', async () => {
      const lic = await createLicense(t, { policy: { max_deactivations_per_30_days: 2 } });
      const releasedAt: Date[] = [];
      for (let i = 0; i < 2; i++) {
        await activate(lic.license_key, `mover-${i}`).expect(200);
        await client('deactivate', seatBody(lic.license_key, `mover-${i}`)).expect(200);
        const [row] = await t.sql(`SELECT released_at FROM activations WHERE license_id = $1 AND machine_fingerprint = $2`, [
          lic.id,
          fingerprint(`mover-${i}`),
        ]);
        releasedAt.push(row.released_at);
      }
      await activate(lic.license_key, 'mover-2').expect(200);
      const refused = await client('deactivate', seatBody(lic.license_key, 'mover-2')).expect(400);
      expect(refused.body.error).toMatchObject({
        code: 'DEACTIVATION_LIMIT_REACHED',
        details: {
          max_deactivations_per_30_days: 2,
          deactivations_last_30_days: 2,
          next_allowed_at: new Date(releasedAt[0].getTime() + 30 * 86_400_000).toISOString(),
        },
      });
      expect(await currentSeats(lic.id)).toEqual([fingerprint('mover-2')]);
      expect((await client('validate', seatBody(lic.license_key, 'mover-2')).expect(200)).body.valid).toBe(true);

      // The oldest deactivation leaves the window: one more is allowed.
      await t.sql(
        `UPDATE activations SET released_at = now() - interval '30 days 1 minute' WHERE license_id = $1 AND machine_fingerprint = $2`,
        [lic.id, fingerprint('mover-0')],
      );
      await client('deactivate', seatBody(lic.license_key, 'mover-2')).expect(200);
    });

    it('a limit of 0 refuses every client deactivation (next_allowed_at null); staff force-release is never limited', async () => {
      const lic = await createLicense(t, { policy: { max_deactivations_per_30_days: 0 } });
      await activate(lic.license_key, 'pinned').expect(200);
      const refused = await client('deactivate', seatBody(lic.license_key, 'pinned')).expect(400);
      expect(refused.body.error).toMatchObject({ code: 'DEACTIVATION_LIMIT_REACHED', details: { next_allowed_at: null } });
      // NOT_ACTIVATED still wins for a machine without a seat.
      expect((await client('deactivate', seatBody(lic.license_key, 'stranger')).expect(400)).body.error.code).toBe('NOT_ACTIVATED');
      await t.admin.post(`/api/v1/admin/licenses/${lic.id}/release`).send({}).expect(200);
      expect(await currentSeats(lic.id)).toEqual([]);
    });

    it('20 parallel deactivations with a limit of 1: exactly one succeeds', async () => {
      const lic = await createLicense(t, { limits: { max_installations: 20 }, policy: { max_deactivations_per_30_days: 1 } });
      const machines = Array.from({ length: 20 }, (_, i) => `parallel-${i}`);
      for (const m of machines) await activate(lic.license_key, m).expect(200);
      const results = await Promise.all(machines.map((m) => client('deactivate', seatBody(lic.license_key, m))));
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      expect(results.filter((r) => r.status !== 200).map((r) => r.body.error.code)).toEqual(Array(19).fill('DEACTIVATION_LIMIT_REACHED'));
      expect(await currentSeats(lic.id)).toHaveLength(19);
      const [{ n }] = await t.sql(`SELECT count(*)::int AS n FROM audit_entries WHERE license_id = $1 AND action = 'license.deactivated'`, [
        lic.id,
      ]);
      expect(n).toBe(1);
    });
  });

  it('statistics: heartbeat releases per product, current seats exact', async () => {
    const product = await t.admin
      .post('/api/v1/admin/products')
      .send({ code: 'STATS_FLOAT', name: 'Stats floating', key_prefix: 'STF', default_policy: { heartbeat_timeout_seconds: 10 } })
      .expect(201);
    expect(product.body.default_policy.heartbeat_timeout_seconds).toBe(10);
    const lic = await createLicense(t, { product_code: 'STATS_FLOAT', limits: { max_installations: 3 } });
    for (const m of ['s-1', 's-2', 's-3']) await activate(lic.license_key, m).expect(200);
    await silence(lic.id, 's-1', 20);
    await silence(lic.id, 's-2', 20);
    await activate(lic.license_key, 's-4').expect(200);
    const stats = (await t.admin.get('/api/v1/admin/stats').expect(200)).body as {
      product_code: string;
      activations: Record<string, number>;
    }[];
    expect(stats.find((s) => s.product_code === 'STATS_FLOAT')?.activations).toEqual({
      current: 2,
      last_30_days: 4,
      released_by_heartbeat_last_30_days: 2,
    });
    expect(stats.find((s) => s.product_code === 'POS_RETAIL')?.activations.released_by_heartbeat_last_30_days).toEqual(expect.any(Number));
  });
});
