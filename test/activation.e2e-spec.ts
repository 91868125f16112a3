import { createPublicKey, verify } from 'node:crypto';
import canonicalize from 'canonicalize';
import { createLicense, fingerprint, insertSeat, LicenseInput, setLicenseExpiry, requestAuditCount } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const DAY = 86_400_000;

/** A new licence activated on one machine through the client API, with its admin details. */
async function activatedLicense(t: TestApp, overrides: Partial<LicenseInput> = {}) {
  const lic = await createLicense(t, overrides);
  const fp = fingerprint();
  await t.http().post('/api/v1/activate').send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'h' }).expect(200);
  const details = (await t.admin.get(`/api/v1/admin/licenses/${lic.id}`).expect(200)).body;
  return { ...lic, fp, details };
}

/** The columns these tests read from audit_entries and activations rows (pg: timestamptz as Date, jsonb parsed). */
type AuditRow = Record<string, unknown> & { details: Record<string, unknown>; ip: string | null };
type SeatRow = Record<string, unknown> & { activated_at: Date; last_seen_at: Date };

describe('client API: POST /api/v1/activate', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const activate = (body: Record<string, unknown>) => t.http().post('/api/v1/activate').send(body);
  const activation = (license_key: string, fp: string, extra: Record<string, unknown> = {}) =>
    activate({ license_key, machine_fingerprint: fp, hostname: 'till-01', ...extra });
  const newLicense = async (overrides: Partial<LicenseInput> = {}) => {
    const created = await createLicense(t, overrides);
    return { ...created, details: (await t.admin.get(`/api/v1/admin/licenses/${created.id}`).expect(200)).body };
  };
  const auditOf = (licenseId: number | null, action: string) =>
    licenseId === null
      ? t.sql<AuditRow>('SELECT * FROM audit_entries WHERE license_id IS NULL AND action = $1 ORDER BY id', [action])
      : t.sql<AuditRow>('SELECT * FROM audit_entries WHERE license_id = $1 AND action = $2 ORDER BY id', [licenseId, action]);
  const currentSeats = (licenseId: number) =>
    t.sql<SeatRow>('SELECT * FROM activations WHERE license_id = $1 AND released_at IS NULL ORDER BY id', [licenseId]);
  const expectError = (res: { status: number; body: unknown }, code: string) => {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  };

  describe('success', () => {
    it('binds the machine and returns the signed licence with key_id, merged limits and customer', async () => {
      const lic = await newLicense({
        customer_email: 'it@acme.example',
        limits: { max_operators: 8 },
        features: ['REPORTS', 'INVENTORY'],
        grace_days: 3,
      });
      const fp = fingerprint('payload');
      const res = await activation(lic.license_key, fp, { os: 'Windows 11', app_version: '4.2.0' }).expect(200);
      const { public_key_pem, key_id } = (await t.http().get('/api/v1/public-key').expect(200)).body;
      const [seat] = await currentSeats(lic.id);

      expect(Object.keys(res.body).sort()).toEqual(['license', 'signature']);
      expect(res.body.license).toEqual({
        license_key: lic.license_key,
        product: 'POS_RETAIL',
        license_type: 'YEARLY',
        issued_at: lic.details.created_at,
        expires_at: lic.details.expires_at,
        activated_at: seat.activated_at.toISOString(),
        machine_fingerprint: fp,
        grace_days: 3,
        limits: { max_installations: 1, max_operators: 8 },
        features: ['REPORTS', 'INVENTORY'],
        customer: { name: lic.details.customer_name, email: 'it@acme.example' },
        key_id,
        signed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        policy: {
          heartbeat_timeout_seconds: null,
          max_deactivations_per_30_days: null,
          license_file_ttl_days: 30,
          max_uses: null,
          uses_period: 'none',
        },
      });
      expect(res.body.signature).toMatch(/^RSA-SHA256:[A-Za-z0-9+/]+={0,2}$/);
      const signature = Buffer.from(res.body.signature.slice('RSA-SHA256:'.length), 'base64');
      expect(signature).toHaveLength(256);
      const bytes = Buffer.from(canonicalize(res.body.license) as string, 'utf8');
      expect(verify('sha256', bytes, createPublicKey(public_key_pem), signature)).toBe(true);

      expect(seat).toMatchObject({
        machine_fingerprint: fp,
        hostname: 'till-01',
        os: 'Windows 11',
        app_version: '4.2.0',
        ip: expect.any(String),
      });
      const [audit] = await auditOf(lic.id, 'license.activated');
      expect(audit).toMatchObject({ actor_type: 'client', product_code: 'POS_RETAIL', ip: expect.any(String) });
      expect(audit.details).toMatchObject({ machine_fingerprint: fp, hostname: 'till-01', reactivation: false });
    });

    it('customer.email is null when unknown; a PERPETUAL licence has expires_at null', async () => {
      const lic = await newLicense({ license_type: 'PERPETUAL' });
      const res = await activation(lic.license_key, fingerprint()).expect(200);
      expect(res.body.license.customer).toEqual({ name: lic.details.customer_name, email: null });
      expect(res.body.license.expires_at).toBeNull();
    });

    it('normalises the key (trimmed, case-insensitive) and lower-cases an upper-case fingerprint', async () => {
      const lic = await newLicense();
      const hex = 'AB'.repeat(32);
      const res = await activation(`  ${lic.license_key.toLowerCase()}\n`, `sha256:${hex}`).expect(200);
      expect(res.body.license.license_key).toBe(lic.license_key);
      expect(res.body.license.machine_fingerprint).toBe(`sha256:${hex.toLowerCase()}`);
    });

    it('ignores unknown fields (a newer client may send more) and accepts a matching product case-insensitively', async () => {
      const lic = await newLicense();
      await activation(lic.license_key, fingerprint(), { product: 'pos_retail', client_build: 77, extra: { nested: true } }).expect(200);
    });

    it('activating again from the bound machine is 200, keeps activated_at, refreshes last_seen_at, keeps one seat', async () => {
      const lic = await newLicense();
      const fp = fingerprint('again');
      const first = await activation(lic.license_key, fp).expect(200);
      await t.sql(`UPDATE activations SET last_seen_at = now() - interval '2 hours' WHERE license_id = $1`, [lic.id]);
      const [before] = await currentSeats(lic.id);
      const second = await activation(lic.license_key, fp, { app_version: '4.3.0' }).expect(200);
      expect(second.body.license.activated_at).toBe(first.body.license.activated_at);
      const seats = await currentSeats(lic.id);
      expect(seats).toHaveLength(1);
      expect(seats[0].activated_at.toISOString()).toBe(first.body.license.activated_at);
      expect(seats[0].last_seen_at.getTime()).toBeGreaterThan(before.last_seen_at.getTime());
      expect(seats[0].app_version).toBe('4.3.0');
      const audits = await auditOf(lic.id, 'license.activated');
      expect(audits.map((a) => a.details.reactivation)).toEqual([false]);
    });

    it('a licence in grace (expired, within grace_days) still activates', async () => {
      const lic = await newLicense({ grace_days: 7 });
      await setLicenseExpiry(t, lic.id, new Date(Date.now() - 2 * DAY));
      await activation(lic.license_key, fingerprint()).expect(200);
    });

    it('max_installations 3 binds three machines, the fourth gets ALREADY_ACTIVATED', async () => {
      const lic = await newLicense({ limits: { max_installations: 3 } });
      for (let i = 0; i < 3; i++) await activation(lic.license_key, fingerprint(`three-${i}`), { hostname: `host-${i}` }).expect(200);
      const res = await activation(lic.license_key, fingerprint('three-4'));
      expectError(res, 'ALREADY_ACTIVATED');
      expect(res.body.error.details).toMatchObject({ activated_on: 'host-2', max_installations: 3 });
      // Any of the three bound machines may still re-activate.
      await activation(lic.license_key, fingerprint('three-0')).expect(200);
    });
  });

  describe('errors, in the documented order (docs/client-api.md, Activate)', () => {
    it('INVALID_KEY for a key that does not exist, audited without a licence id', async () => {
      const fp = fingerprint('nokey');
      const res = await activation('POS-00000-00000-00000-00000', fp);
      expectError(res, 'INVALID_KEY');
      expect(res.body.error.details).toBeUndefined();
      const audits = await auditOf(null, 'license.activation_denied');
      expect(audits.some((a) => a.details.code === 'INVALID_KEY' && a.details.machine_fingerprint === fp && a.ip)).toBe(true);
    });

    it('INVALID_KEY also for a well-formed string that is not a key at all', async () => {
      expectError(await activation('not-a-key', fingerprint()), 'INVALID_KEY');
    });

    it('PRODUCT_MISMATCH when the client names another product', async () => {
      const lic = await newLicense();
      const res = await activation(lic.license_key, fingerprint(), { product: 'ERP_SUITE' });
      expectError(res, 'PRODUCT_MISMATCH');
      expect(res.body.error.details).toEqual({ expected: 'ERP_SUITE', license_product: 'POS_RETAIL' });
      expect(await currentSeats(lic.id)).toHaveLength(0);
    });

    it('KEY_REVOKED after revocation', async () => {
      const lic = await newLicense();
      await t.admin.post(`/api/v1/admin/licenses/${lic.id}/revoke`).send({ reason: 'chargeback' }).expect(200);
      expectError(await activation(lic.license_key, fingerprint()), 'KEY_REVOKED');
    });

    it('KEY_SUSPENDED when the admin sets active: false, and activates again once re-enabled', async () => {
      const lic = await newLicense();
      await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ active: false }).expect(200);
      expectError(await activation(lic.license_key, fingerprint()), 'KEY_SUSPENDED');
      await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ active: true }).expect(200);
      await activation(lic.license_key, fingerprint()).expect(200);
    });

    it('KEY_EXPIRED after expires_at + grace_days', async () => {
      const lic = await newLicense();
      await setLicenseExpiry(t, lic.id, new Date(Date.now() - 10 * DAY), 7);
      expectError(await activation(lic.license_key, fingerprint()), 'KEY_EXPIRED');
    });

    it('ALREADY_ACTIVATED on another machine, naming the most recent binding', async () => {
      const lic = await newLicense({ limits: { max_installations: 2 } });
      await insertSeat(t, lic.id, { hostname: 'old-host', activated_at: new Date(Date.now() - 5 * DAY) });
      await activation(lic.license_key, fingerprint('recent'), { hostname: 'recent-host' }).expect(200);
      const [recent] = await t.sql<{ activated_at: Date }>(
        `SELECT activated_at FROM activations WHERE license_id = $1 AND hostname = 'recent-host'`,
        [lic.id],
      );
      const res = await activation(lic.license_key, fingerprint('third'));
      expectError(res, 'ALREADY_ACTIVATED');
      expect(res.body.error.details).toEqual({
        activated_on: 'recent-host',
        activated_at: recent.activated_at.toISOString(),
        max_installations: 2,
      });
    });

    it('a denial writes only its audit entry (code, fingerprint, IP) and no seat', async () => {
      const lic = await newLicense();
      await activation(lic.license_key, fingerprint('holder')).expect(200);
      const fp = fingerprint('denied');
      await activation(lic.license_key, fp).expect(400);
      const [denied] = await auditOf(lic.id, 'license.activation_denied');
      expect(denied).toMatchObject({ actor_type: 'client', product_code: 'POS_RETAIL', ip: expect.any(String) });
      expect(denied.details).toMatchObject({ code: 'ALREADY_ACTIVATED', machine_fingerprint: fp, ip: denied.ip });
      expect(await currentSeats(lic.id)).toHaveLength(1);
    });

    it('applies the order INVALID_KEY > PRODUCT_MISMATCH > KEY_REVOKED > KEY_SUSPENDED > KEY_EXPIRED > ALREADY_ACTIVATED', async () => {
      const lic = await newLicense();
      await insertSeat(t, lic.id, { hostname: 'holder' });
      expectError(await activation(lic.license_key, fingerprint()), 'ALREADY_ACTIVATED');
      await setLicenseExpiry(t, lic.id, new Date(Date.now() - 30 * DAY), 0);
      expectError(await activation(lic.license_key, fingerprint()), 'KEY_EXPIRED');
      await t.sql('UPDATE licenses SET active = false WHERE id = $1', [lic.id]);
      expectError(await activation(lic.license_key, fingerprint()), 'KEY_SUSPENDED');
      await t.sql('UPDATE licenses SET revoked = true, revoked_at = now() WHERE id = $1', [lic.id]);
      expectError(await activation(lic.license_key, fingerprint()), 'KEY_REVOKED');
      expectError(await activation(lic.license_key, fingerprint(), { product: 'FISCAL_BRIDGE' }), 'PRODUCT_MISMATCH');
      expectError(
        await activation(
          lic.license_key.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
          fingerprint(),
          { product: 'FISCAL_BRIDGE' },
        ),
        'INVALID_KEY',
      );
    });
  });

  describe('moving a licence between machines', () => {
    it('deactivate on machine A, then activate on machine B', async () => {
      const lic = await newLicense();
      await activation(lic.license_key, fingerprint('A')).expect(200);
      expectError(await activation(lic.license_key, fingerprint('B')), 'ALREADY_ACTIVATED');
      await t
        .http()
        .post('/api/v1/deactivate')
        .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('A') })
        .expect(200);
      const res = await activation(lic.license_key, fingerprint('B')).expect(200);
      expect(res.body.license.machine_fingerprint).toBe(fingerprint('B'));
    });

    it('force release by the admin (machine unreachable), then activate elsewhere; the old machine is then refused', async () => {
      const lic = await newLicense();
      await activation(lic.license_key, fingerprint('lost')).expect(200);
      await t.admin.post(`/api/v1/admin/licenses/${lic.id}/release`).send({}).expect(200);
      await activation(lic.license_key, fingerprint('new')).expect(200);
      expectError(await activation(lic.license_key, fingerprint('lost')), 'ALREADY_ACTIVATED');
    });

    it('deactivate and re-activate on the same machine gives a new activated_at', async () => {
      const lic = await newLicense();
      const fp = fingerprint('same');
      const first = await activation(lic.license_key, fp).expect(200);
      await t.sql(`UPDATE activations SET activated_at = activated_at - interval '1 day' WHERE license_id = $1`, [lic.id]);
      await t.http().post('/api/v1/deactivate').send({ license_key: lic.license_key, machine_fingerprint: fp }).expect(200);
      const second = await activation(lic.license_key, fp).expect(200);
      expect(new Date(second.body.license.activated_at).getTime()).toBeGreaterThanOrEqual(
        new Date(first.body.license.activated_at).getTime(),
      );
      const history = await t.sql('SELECT * FROM activations WHERE license_id = $1 ORDER BY id', [lic.id]);
      expect(history.map((s) => s.release_reason)).toEqual(['deactivated', null]);
    });
  });

  describe('input validation (400 VALIDATION_ERROR, nothing written)', () => {
    const key = 'POS-00000-00000-00000-00000';
    const valid = { license_key: key, machine_fingerprint: fingerprint(), hostname: 'h' };
    const fieldsOf = (body: { error: { details: { fields: { field: string }[] } } }) => body.error.details.fields.map((f) => f.field);

    it.each([
      [{ ...valid, license_key: undefined }, 'license_key'],
      [{ ...valid, license_key: 12345 }, 'license_key'],
      [{ ...valid, license_key: '   ' }, 'license_key'],
      [{ ...valid, license_key: 'K'.repeat(65) }, 'license_key'],
      [{ ...valid, license_key: ['POS'] }, 'license_key'],
      [{ ...valid, machine_fingerprint: undefined }, 'machine_fingerprint'],
      [{ ...valid, machine_fingerprint: 'abc' }, 'machine_fingerprint'],
      [{ ...valid, machine_fingerprint: 'sha256:' + 'a'.repeat(63) }, 'machine_fingerprint'],
      [{ ...valid, machine_fingerprint: 'sha256:' + 'g'.repeat(64) }, 'machine_fingerprint'],
      [{ ...valid, machine_fingerprint: 'md5:' + 'a'.repeat(64) }, 'machine_fingerprint'],
      [{ ...valid, machine_fingerprint: ' sha256:' + 'a'.repeat(64) }, 'machine_fingerprint'],
      [{ ...valid, machine_fingerprint: 42 }, 'machine_fingerprint'],
      [{ ...valid, hostname: undefined }, 'hostname'],
      [{ ...valid, hostname: null }, 'hostname'],
      [{ ...valid, hostname: '' }, 'hostname'],
      [{ ...valid, hostname: 7 }, 'hostname'],
      [{ ...valid, hostname: 'h'.repeat(256) }, 'hostname'],
      [{ ...valid, hostname: 'nul\u0000host' }, 'hostname'],
      [{ ...valid, os: 11 }, 'os'],
      [{ ...valid, os: 'o'.repeat(101) }, 'os'],
      [{ ...valid, app_version: 4.2 }, 'app_version'],
      [{ ...valid, app_version: 'v'.repeat(51) }, 'app_version'],
      [{ ...valid, product: 5 }, 'product'],
      [{ ...valid, product: 'P'.repeat(33) }, 'product'],
    ])('rejects %j naming %s', async (body, field) => {
      const before = await requestAuditCount(t);
      const res = await activate(body as Record<string, unknown>).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(res.body)).toContain(field);
      expect(await requestAuditCount(t)).toEqual(before);
    });

    it('rejects a body that is not a JSON object, and malformed JSON', async () => {
      expect((await activate([valid] as never).expect(400)).body.error.code).toBe('VALIDATION_ERROR');
      const res = await t.http().post('/api/v1/activate').set('Content-Type', 'application/json').send('{"license_key":').expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      await t.http().post('/api/v1/activate').expect(400);
    });

    it('rejects __proto__ smuggling', async () => {
      const res = await t
        .http()
        .post('/api/v1/activate')
        .set('Content-Type', 'application/json')
        .send(`{"__proto__":{"x":1},"license_key":"${key}"}`);
      expect(res.status).toBe(400);
    });
  });
});

describe('client API: POST /api/v1/deactivate', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const deactivate = (license_key: unknown, machine_fingerprint: unknown) =>
    t.http().post('/api/v1/deactivate').send({ license_key, machine_fingerprint });
  const bound = (overrides: Partial<LicenseInput> = {}) => activatedLicense(t, overrides);

  it('releases the seat: 200 {message, can_reactivate: true}, release_reason deactivated, audited', async () => {
    const lic = await bound();
    const res = await deactivate(lic.license_key.toLowerCase(), lic.fp.toUpperCase().replace('SHA256', 'sha256')).expect(200);
    expect(res.body).toEqual({ message: expect.any(String), can_reactivate: true });
    const [seat] = await t.sql('SELECT * FROM activations WHERE license_id = $1', [lic.id]);
    expect(seat.released_at).not.toBeNull();
    expect(seat.release_reason).toBe('deactivated');
    const [audit] = await t.sql(`SELECT * FROM audit_entries WHERE license_id = $1 AND action = 'license.deactivated'`, [lic.id]);
    expect(audit).toMatchObject({ actor_type: 'client', product_code: 'POS_RETAIL' });
    expect(audit.details).toMatchObject({ machine_fingerprint: lic.fp });
  });

  it('NOT_ACTIVATED when this machine holds no seat (again, or never)', async () => {
    const lic = await bound();
    await deactivate(lic.license_key, lic.fp).expect(200);
    const again = await deactivate(lic.license_key, lic.fp).expect(400);
    expect(again.body.error.code).toBe('NOT_ACTIVATED');
    expect((await deactivate(lic.license_key, fingerprint()).expect(400)).body.error.code).toBe('NOT_ACTIVATED');
    const audits = await t.sql(`SELECT * FROM audit_entries WHERE license_id = $1 AND action = 'license.deactivated'`, [lic.id]);
    expect(audits).toHaveLength(1);
  });

  it('INVALID_KEY for an unknown key', async () => {
    expect((await deactivate('POS-00000-00000-00000-00000', fingerprint()).expect(400)).body.error.code).toBe('INVALID_KEY');
  });

  it.each([
    ['revoked', false, (t: TestApp, id: number) => t.admin.post(`/api/v1/admin/licenses/${id}/revoke`).send({ reason: 'x' }).expect(200)],
    ['suspended', false, (t: TestApp, id: number) => t.admin.put(`/api/v1/admin/licenses/${id}`).send({ active: false }).expect(200)],
    ['expired', false, (t: TestApp, id: number) => setLicenseExpiry(t, id, new Date(Date.now() - 30 * DAY), 7)],
    ['in-grace', true, (t: TestApp, id: number) => setLicenseExpiry(t, id, new Date(Date.now() - DAY), 7)],
  ] as const)('a %s licence can still be deactivated; can_reactivate is %s', async (_label, canReactivate, change) => {
    const lic = await bound();
    await change(t, lic.id);
    const res = await deactivate(lic.license_key, lic.fp).expect(200);
    expect(res.body.can_reactivate).toBe(canReactivate);
  });

  it.each([
    [{}, 'license_key'],
    [{ license_key: 'POS-00000-00000-00000-00000' }, 'machine_fingerprint'],
    [{ license_key: true, machine_fingerprint: 'sha256:' + '0'.repeat(64) }, 'license_key'],
    [{ license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: 'sha256:xyz' }, 'machine_fingerprint'],
  ])('400 VALIDATION_ERROR for %j', async (body, field) => {
    const res = await t.http().post('/api/v1/deactivate').send(body).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });
});

describe('client API: POST /api/v1/validate', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const validate = (license_key: string, machine_fingerprint: string) =>
    t.http().post('/api/v1/validate').send({ license_key, machine_fingerprint });
  const bound = (overrides: Partial<LicenseInput> = {}) => activatedLicense(t, overrides);
  const lastSeen = async (id: number) =>
    (await t.sql('SELECT last_seen_at FROM activations WHERE license_id = $1 AND released_at IS NULL', [id]))[0].last_seen_at as Date;

  it('200 valid for a bound machine of an active licence', async () => {
    const lic = await bound({ grace_days: 5 });
    const res = await validate(lic.license_key, lic.fp).expect(200);
    expect(res.body).toEqual({
      valid: true,
      status: 'active',
      expires_at: lic.details.expires_at,
      revoked: false,
      grace_ends_at: new Date(new Date(lic.details.expires_at).getTime() + 5 * DAY).toISOString(),
      code: null,
      uses: null,
      max_uses: null,
    });
  });

  it('a PERPETUAL licence has expires_at and grace_ends_at null', async () => {
    const lic = await bound({ license_type: 'PERPETUAL' });
    expect((await validate(lic.license_key, lic.fp).expect(200)).body).toMatchObject({
      valid: true,
      expires_at: null,
      grace_ends_at: null,
    });
  });

  it('NOT_ACTIVATED for a machine without a seat', async () => {
    const lic = await bound();
    expect((await validate(lic.license_key, fingerprint()).expect(200)).body).toMatchObject({
      valid: false,
      status: 'active',
      code: 'NOT_ACTIVATED',
    });
  });

  it('valid in grace', async () => {
    const lic = await bound();
    await setLicenseExpiry(t, lic.id, new Date(Date.now() - DAY), 7);
    expect((await validate(lic.license_key, lic.fp).expect(200)).body).toMatchObject({ valid: true, status: 'grace', code: null });
  });

  it('KEY_REVOKED for a bound machine after revocation (seats stay bound)', async () => {
    const lic = await bound();
    await t.admin.post(`/api/v1/admin/licenses/${lic.id}/revoke`).send({ reason: 'fraud' }).expect(200);
    expect((await validate(lic.license_key, lic.fp).expect(200)).body).toMatchObject({
      valid: false,
      status: 'revoked',
      revoked: true,
      code: 'KEY_REVOKED',
    });
    expect((await validate(lic.license_key, fingerprint()).expect(200)).body.code).toBe('KEY_REVOKED');
  });

  it('KEY_SUSPENDED and KEY_EXPIRED', async () => {
    const suspended = await bound();
    await t.admin.put(`/api/v1/admin/licenses/${suspended.id}`).send({ active: false }).expect(200);
    expect((await validate(suspended.license_key, suspended.fp).expect(200)).body).toMatchObject({
      valid: false,
      status: 'suspended',
      code: 'KEY_SUSPENDED',
    });
    const expired = await bound();
    await setLicenseExpiry(t, expired.id, new Date(Date.now() - 30 * DAY), 7);
    expect((await validate(expired.license_key, expired.fp).expect(200)).body).toMatchObject({
      valid: false,
      status: 'expired',
      code: 'KEY_EXPIRED',
    });
  });

  it('400 INVALID_KEY for an unknown key', async () => {
    expect((await validate('POS-00000-00000-00000-00000', fingerprint()).expect(400)).body.error.code).toBe('INVALID_KEY');
  });

  it('400 VALIDATION_ERROR for a malformed fingerprint', async () => {
    expect((await validate('POS-00000-00000-00000-00000', 'sha1:abc').expect(400)).body.error.code).toBe('VALIDATION_ERROR');
  });

  it('refreshes last_seen_at only when older than LAST_SEEN_INTERVAL, and only when valid', async () => {
    const lic = await bound();
    await t.sql(`UPDATE activations SET last_seen_at = now() - interval '10 seconds' WHERE license_id = $1`, [lic.id]);
    const recent = await lastSeen(lic.id);
    await validate(lic.license_key, lic.fp).expect(200);
    expect((await lastSeen(lic.id)).getTime()).toBe(recent.getTime());

    await t.sql(`UPDATE activations SET last_seen_at = now() - interval '2 hours' WHERE license_id = $1`, [lic.id]);
    const old = await lastSeen(lic.id);
    await validate(lic.license_key, lic.fp).expect(200);
    expect((await lastSeen(lic.id)).getTime()).toBeGreaterThan(old.getTime() + 3_600_000);

    await t.sql(`UPDATE activations SET last_seen_at = now() - interval '2 hours' WHERE license_id = $1`, [lic.id]);
    await t.sql('UPDATE licenses SET active = false WHERE id = $1', [lic.id]);
    const stale = await lastSeen(lic.id);
    await validate(lic.license_key, lic.fp).expect(200);
    expect((await lastSeen(lic.id)).getTime()).toBe(stale.getTime());
  });

  it('does not write audit entries', async () => {
    const lic = await bound();
    const before = await requestAuditCount(t);
    await validate(lic.license_key, lic.fp).expect(200);
    expect(await requestAuditCount(t)).toEqual(before);
  });
});
