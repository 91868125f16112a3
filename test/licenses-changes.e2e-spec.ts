import { createLicense, fingerprint, insertSeat, setLicenseExpiry } from './support/factories';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const LICENSES = '/api/v1/admin/licenses';
const DAY_MS = 86_400_000;

describe('admin licences API: update, suspend, reinstate, revoke, release', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const auditOf = (id: number, action?: string) =>
    t.sql<{
      action: string;
      details: Record<string, unknown> & { machine_fingerprints?: string[] };
      actor_type: string;
      actor: string;
      product_code: string;
    }>(`SELECT * FROM audit_entries WHERE license_id = $1 ${action ? 'AND action = $2' : ''} ORDER BY id`, action ? [id, action] : [id]);
  const licenseRow = async (id: number) => (await t.sql('SELECT * FROM licenses WHERE id = $1', [id]))[0];
  const get = async (id: number) => (await t.admin.get(`${LICENSES}/${id}`).expect(200)).body;

  describe('PUT /licenses/{id}', () => {
    it('changes the given fields only, returns the licence as GET does, and audits old and new values', async () => {
      const { id } = await createLicense(t, { customer_name: 'Before', customer_email: 'old@example.rs', notes: 'keep me' });
      const res = await t.admin.put(`${LICENSES}/${id}`).send({ customer_name: 'After', grace_days: 14 }).expect(200);
      expect(res.body).toEqual(await get(id));
      expect(res.body).toMatchObject({ customer_name: 'After', grace_days: 14, customer_email: 'old@example.rs', notes: 'keep me' });
      const [entry] = await auditOf(id, 'license.updated');
      expect(entry).toMatchObject({ actor_type: 'admin_api', product_code: 'POS_RETAIL' });
      expect(entry.details).toEqual({ changes: { customer_name: { from: 'Before', to: 'After' }, grace_days: { from: 7, to: 14 } } });
    });

    it.each([
      ['customer_email', 'new@example.rs'],
      ['customer_pib', '101134702'],
      ['notes', 'n'.repeat(2000)],
      ['features', ['REPORTS']],
      ['features', []],
      ['grace_days', 0],
      ['grace_days', 365],
      ['customer_name', 'N'.repeat(200)],
    ])('accepts %s = %j', async (field, value) => {
      const { id } = await createLicense(t);
      const res = await t.admin
        .put(`${LICENSES}/${id}`)
        .send({ [field]: value })
        .expect(200);
      expect(res.body[field]).toEqual(value);
    });

    it('clears customer_email, customer_pib and notes with null', async () => {
      const { id } = await createLicense(t, { customer_email: 'x@example.rs', customer_pib: '101134702', notes: 'n' });
      const res = await t.admin.put(`${LICENSES}/${id}`).send({ customer_email: null, customer_pib: null, notes: null }).expect(200);
      expect(res.body).toMatchObject({ customer_email: null, customer_pib: null, notes: null });
    });

    it('limits replace the own overrides; product defaults still apply beneath', async () => {
      const { id } = await createLicense(t, { limits: { max_installations: 3, custom: 1 } });
      const res = await t.admin
        .put(`${LICENSES}/${id}`)
        .send({ limits: { max_operators: 20 } })
        .expect(200);
      expect(res.body.limit_overrides).toEqual({ max_operators: 20 });
      expect(res.body.limits).toEqual({ max_installations: 1, max_operators: 20 });
      const cleared = await t.admin.put(`${LICENSES}/${id}`).send({ limits: {} }).expect(200);
      expect(cleared.body.limits).toEqual({ max_installations: 1, max_operators: 5 });
    });

    it('expires_at may be set in the past, ending the licence early (grace still applies)', async () => {
      const { id } = await createLicense(t);
      const inGrace = await t.admin
        .put(`${LICENSES}/${id}`)
        .send({ expires_at: new Date(Date.now() - DAY_MS).toISOString() })
        .expect(200);
      expect(inGrace.body.status).toBe('grace');
      const ended = await t.admin.put(`${LICENSES}/${id}`).send({ expires_at: '2020-01-01T00:00:00Z' }).expect(200);
      expect(ended.body).toMatchObject({ status: 'expired', expires_at: '2020-01-01T00:00:00.000Z' });
      const extended = await t.admin.put(`${LICENSES}/${id}`).send({ expires_at: '2099-01-01T00:00:00+01:00' }).expect(200);
      expect(extended.body).toMatchObject({ status: 'active', expires_at: '2098-12-31T23:00:00.000Z' });
    });

    it('license_type: between dated types keeps expires_at; to PERPETUAL clears it; from PERPETUAL computes it from now', async () => {
      const { id } = await createLicense(t, { license_type: 'MONTHLY' });
      const before = (await get(id)).expires_at;
      expect((await t.admin.put(`${LICENSES}/${id}`).send({ license_type: 'YEARLY' }).expect(200)).body).toMatchObject({
        license_type: 'YEARLY',
        expires_at: before,
      });
      expect((await t.admin.put(`${LICENSES}/${id}`).send({ license_type: 'PERPETUAL' }).expect(200)).body).toMatchObject({
        expires_at: null,
        grace_ends_at: null,
      });
      const trial = (await t.admin.put(`${LICENSES}/${id}`).send({ license_type: 'TRIAL' }).expect(200)).body;
      expect(Math.abs(Date.parse(trial.expires_at) - (Date.now() + 14 * DAY_MS))).toBeLessThan(60_000);
      const explicit = await t.admin
        .put(`${LICENSES}/${id}`)
        .send({ license_type: 'YEARLY', expires_at: '2030-05-05T00:00:00Z' })
        .expect(200);
      expect(explicit.body).toMatchObject({ license_type: 'YEARLY', expires_at: '2030-05-05T00:00:00.000Z' });
      const perpetual = await t.admin.put(`${LICENSES}/${id}`).send({ license_type: 'PERPETUAL', expires_at: null }).expect(200);
      expect(perpetual.body.expires_at).toBeNull();
    });

    it('active false suspends and true reinstates, each audited', async () => {
      const { id } = await createLicense(t);
      expect((await t.admin.put(`${LICENSES}/${id}`).send({ active: false }).expect(200)).body).toMatchObject({
        active: false,
        status: 'suspended',
      });
      expect((await t.admin.put(`${LICENSES}/${id}`).send({ active: true }).expect(200)).body).toMatchObject({
        active: true,
        status: 'active',
      });
      expect((await auditOf(id, 'license.updated')).map((e) => e.details.changes)).toEqual([
        { active: { from: true, to: false } },
        { active: { from: false, to: true } },
      ]);
    });

    it('a PUT that changes nothing answers 200 and writes no audit entry', async () => {
      const { id } = await createLicense(t, { customer_name: 'Same', limits: { a: 1, b: 2 } });
      const before = await licenseRow(id);
      await t.admin
        .put(`${LICENSES}/${id}`)
        .send({ customer_name: 'Same', active: true, limits: { b: 2, a: 1 } })
        .expect(200);
      expect(await auditOf(id, 'license.updated')).toEqual([]);
      expect((await licenseRow(id)).updated_at).toEqual(before.updated_at);
    });

    it('a revoked licence cannot be made active again (409 CONFLICT), but its notes can change', async () => {
      const { id } = await createLicense(t);
      await t.admin.put(`${LICENSES}/${id}`).send({ active: false }).expect(200);
      await t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: 'fraud' }).expect(200);
      const auditBefore = (await auditOf(id)).length;
      const res = await t.admin.put(`${LICENSES}/${id}`).send({ active: true, notes: 'try' }).expect(409);
      expect(res.body.error.code).toBe('CONFLICT');
      expect(await auditOf(id)).toHaveLength(auditBefore);
      expect((await licenseRow(id)).notes).toBeNull();
      expect((await t.admin.put(`${LICENSES}/${id}`).send({ notes: 'fraud case 12' }).expect(200)).body).toMatchObject({
        status: 'revoked',
        notes: 'fraud case 12',
      });
    });

    describe('rejects invalid changes with 400 VALIDATION_ERROR, leaving the licence and the audit log untouched', () => {
      let id: number;
      beforeAll(async () => (id = (await createLicense(t, { license_type: 'MONTHLY' })).id), 60_000);

      it.each([
        [{}, 'body'],
        [{ product_code: 'ERP_SUITE' }, 'product_code'],
        [{ status: 'active' }, 'status'],
        [{ license_key: 'POS-AAAAA-AAAAA-AAAAA-AAAAA' }, 'license_key'],
        [{ revoked: false }, 'revoked'],
        [{ customer_name: null }, 'customer_name'],
        [{ customer_name: '' }, 'customer_name'],
        [{ customer_name: 'N'.repeat(201) }, 'customer_name'],
        [{ customer_email: 'nope' }, 'customer_email'],
        [{ customer_pib: '101134701' }, 'customer_pib'],
        [{ limits: null }, 'limits'],
        [{ limits: { max_installations: -1 } }, 'limits'],
        [{ features: null }, 'features'],
        [{ features: ['ACCOUNTING'] }, 'features'],
        [{ features: ['REPORTS', 'REPORTS'] }, 'features'],
        [{ grace_days: null }, 'grace_days'],
        [{ grace_days: 366 }, 'grace_days'],
        [{ grace_days: '7' }, 'grace_days'],
        [{ notes: 'n'.repeat(2001) }, 'notes'],
        [{ license_type: null }, 'license_type'],
        [{ license_type: 'FOREVER' }, 'license_type'],
        [{ active: null }, 'active'],
        [{ active: 'false' }, 'active'],
        [{ active: 0 }, 'active'],
        [{ expires_at: 'soon' }, 'expires_at'],
        [{ expires_at: '2030-13-01T00:00:00Z' }, 'expires_at'],
        [{ expires_at: null }, 'expires_at'],
        [{ license_type: 'PERPETUAL', expires_at: '2030-01-01T00:00:00Z' }, 'expires_at'],
      ])('%j', async (body, field) => {
        const before = await licenseRow(id);
        const auditBefore = (await auditOf(id)).length;
        const res = await t.admin.put(`${LICENSES}/${id}`).send(body).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(fieldsOf(res.body)).toContain(field);
        expect(await licenseRow(id)).toEqual(before);
        expect(await auditOf(id)).toHaveLength(auditBefore);
      });

      it('an expiry on a PERPETUAL licence', async () => {
        const perpetual = await createLicense(t, { license_type: 'PERPETUAL' });
        const res = await t.admin.put(`${LICENSES}/${perpetual.id}`).send({ expires_at: '2030-01-01T00:00:00Z' }).expect(400);
        expect(fieldsOf(res.body)).toEqual(['expires_at']);
      });
    });

    it('404 NOT_FOUND for an unknown licence', async () => {
      expect((await t.admin.put(`${LICENSES}/999999`).send({ notes: 'x' }).expect(404)).body.error.code).toBe('NOT_FOUND');
    });
  });

  describe('POST /licenses/{id}/revoke', () => {
    it('revokes: 200 with the licence as GET, reason and time kept, seats stay bound, audited with the reason', async () => {
      const { id } = await createLicense(t);
      const seat = await insertSeat(t, id);
      const res = await t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: 'Customer stopped paying' }).expect(200);
      expect(res.body).toEqual(await get(id));
      expect(res.body).toMatchObject({
        revoked: true,
        status: 'revoked',
        revoke_reason: 'Customer stopped paying',
        revoked_at: expect.stringMatching(/Z$/),
      });
      expect(Math.abs(Date.parse(res.body.revoked_at) - Date.now())).toBeLessThan(60_000);
      expect(res.body.activations.map((a: { id: number }) => a.id)).toEqual([seat.id]);
      const entries = await auditOf(id, 'license.revoked');
      expect(entries).toHaveLength(1);
      expect(entries[0].details).toEqual({ reason: 'Customer stopped paying' });
    });

    it('409 ALREADY_REVOKED the second time, keeping the first reason and writing no audit entry', async () => {
      const { id } = await createLicense(t);
      await t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: 'first' }).expect(200);
      const res = await t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: 'second' }).expect(409);
      expect(res.body.error.code).toBe('ALREADY_REVOKED');
      expect((await get(id)).revoke_reason).toBe('first');
      expect(await auditOf(id, 'license.revoked')).toHaveLength(1);
    });

    it('two concurrent revokes: one 200, one 409 ALREADY_REVOKED, one audit entry', async () => {
      const { id } = await createLicense(t);
      const results = await Promise.all([1, 2].map((n) => t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: `race ${n}` })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(results.find((r) => r.status === 409)?.body.error.code).toBe('ALREADY_REVOKED');
      expect(await auditOf(id, 'license.revoked')).toHaveLength(1);
    });

    it('accepts a 500-character reason', async () => {
      const { id } = await createLicense(t);
      expect(
        (
          await t.admin
            .post(`${LICENSES}/${id}/revoke`)
            .send({ reason: 'r'.repeat(500) })
            .expect(200)
        ).body.revoke_reason,
      ).toHaveLength(500);
    });

    it.each([
      [{}, 'reason'],
      [{ reason: '' }, 'reason'],
      [{ reason: '   ' }, 'reason'],
      [{ reason: 'r'.repeat(501) }, 'reason'],
      [{ reason: 42 }, 'reason'],
      [{ reason: null }, 'reason'],
      [{ reason: 'a\u0000b' }, 'reason'],
      [{ reason: 'ok', notify: true }, 'notify'],
    ])('400 VALIDATION_ERROR for %j, licence not revoked, nothing audited', async (body, field) => {
      const { id } = await createLicense(t);
      const res = await t.admin.post(`${LICENSES}/${id}/revoke`).send(body).expect(400);
      expect(fieldsOf(res.body)).toContain(field);
      expect((await get(id)).revoked).toBe(false);
      expect(await auditOf(id, 'license.revoked')).toEqual([]);
    });

    it('404 NOT_FOUND for an unknown licence', async () => {
      expect((await t.admin.post(`${LICENSES}/999999/revoke`).send({ reason: 'x' }).expect(404)).body.error.code).toBe('NOT_FOUND');
    });
  });

  describe('POST /licenses/{id}/release', () => {
    it('releases the seat of one machine (upper-case hex accepted) and leaves the others bound', async () => {
      const { id } = await createLicense(t, { limits: { max_installations: 2 } });
      const a = await insertSeat(t, id, { machine_fingerprint: fingerprint('machine a') });
      const b = await insertSeat(t, id, { machine_fingerprint: fingerprint('machine b') });
      const upper = 'sha256:' + a.machine_fingerprint.slice(7).toUpperCase();
      const res = await t.admin.post(`${LICENSES}/${id}/release`).send({ machine_fingerprint: upper, reason: 'stolen laptop' }).expect(200);
      expect(res.body).toEqual({ message: expect.any(String), released: 1 });
      expect((await get(id)).activations.map((s: { id: number }) => s.id)).toEqual([b.id]);
      const history = (await t.admin.get(`${LICENSES}/${id}/activations`).expect(200)).body;
      expect(history.find((s: { id: number }) => s.id === a.id)).toMatchObject({
        active: false,
        release_reason: 'force_released',
        released_at: expect.stringMatching(/Z$/),
      });
      const [entry] = await auditOf(id, 'license.released');
      expect(entry.details).toEqual({ machine_fingerprints: [a.machine_fingerprint], released: 1, reason: 'stolen laptop' });
    });

    it('releases every seat when no fingerprint is given (also on a revoked licence)', async () => {
      const { id } = await createLicense(t, { limits: { max_installations: 3 } });
      const seats = [await insertSeat(t, id), await insertSeat(t, id)];
      await insertSeat(t, id, { released_at: new Date(Date.now() - DAY_MS) });
      await t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: 'moving everything' }).expect(200);
      const res = await t.admin.post(`${LICENSES}/${id}/release`).send({}).expect(200);
      expect(res.body.released).toBe(2);
      expect((await get(id)).activations).toEqual([]);
      const [entry] = await auditOf(id, 'license.released');
      expect(entry.details.machine_fingerprints?.sort()).toEqual(seats.map((s) => s.machine_fingerprint).sort());
      expect(entry.details).toMatchObject({ released: 2, reason: null });
    });

    it('409 NOT_ACTIVATED when nothing is bound, or not that machine; nothing audited', async () => {
      const { id } = await createLicense(t);
      expect((await t.admin.post(`${LICENSES}/${id}/release`).send({}).expect(409)).body.error.code).toBe('NOT_ACTIVATED');
      await insertSeat(t, id, { machine_fingerprint: fingerprint('bound') });
      const other = await t.admin
        .post(`${LICENSES}/${id}/release`)
        .send({ machine_fingerprint: fingerprint('other') })
        .expect(409);
      expect(other.body.error.code).toBe('NOT_ACTIVATED');
      expect(await auditOf(id, 'license.released')).toEqual([]);
      expect((await get(id)).activations).toHaveLength(1);
    });

    it('two concurrent releases of all seats: one 200, one 409 NOT_ACTIVATED', async () => {
      const { id } = await createLicense(t);
      await insertSeat(t, id);
      const results = await Promise.all([1, 2].map(() => t.admin.post(`${LICENSES}/${id}/release`).send({})));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(await auditOf(id, 'license.released')).toHaveLength(1);
    });

    it.each([
      [{ machine_fingerprint: 'a'.repeat(64) }, 'machine_fingerprint'],
      [{ machine_fingerprint: 'sha256:' + 'a'.repeat(63) }, 'machine_fingerprint'],
      [{ machine_fingerprint: 'sha256:' + 'g'.repeat(64) }, 'machine_fingerprint'],
      [{ machine_fingerprint: 'md5:' + 'a'.repeat(64) }, 'machine_fingerprint'],
      [{ machine_fingerprint: 12 }, 'machine_fingerprint'],
      [{ machine_fingerprint: null }, 'machine_fingerprint'],
      [{ reason: 'r'.repeat(501) }, 'reason'],
      [{ reason: 5 }, 'reason'],
      [{ all: true }, 'all'],
    ])('400 VALIDATION_ERROR for %j, seats untouched', async (body, field) => {
      const { id } = await createLicense(t);
      await insertSeat(t, id);
      const res = await t.admin.post(`${LICENSES}/${id}/release`).send(body).expect(400);
      expect(fieldsOf(res.body)).toContain(field);
      expect((await get(id)).activations).toHaveLength(1);
      expect(await auditOf(id, 'license.released')).toEqual([]);
    });

    it('a request without a JSON body is a 400, not a silent release of everything', async () => {
      const { id } = await createLicense(t);
      await insertSeat(t, id);
      await t.admin.post(`${LICENSES}/${id}/release`).expect(400);
      expect((await get(id)).activations).toHaveLength(1);
    });

    it('404 NOT_FOUND for an unknown licence', async () => {
      expect((await t.admin.post(`${LICENSES}/999999/release`).send({}).expect(404)).body.error.code).toBe('NOT_FOUND');
    });
  });

  it('an expired licence can still be changed and revoked', async () => {
    const { id } = await createLicense(t);
    await setLicenseExpiry(t, id, new Date('2020-01-01T00:00:00Z'));
    expect((await t.admin.put(`${LICENSES}/${id}`).send({ notes: 'late' }).expect(200)).body.status).toBe('expired');
    expect((await t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: 'late' }).expect(200)).body.status).toBe('revoked');
  });
});
