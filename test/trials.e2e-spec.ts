import { createPublicKey, verify } from 'node:crypto';
import canonicalize from 'canonicalize';
import { fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/** docs/client-api.md, Trials; docs/licences.md, Trials: self-service trials, one per product and machine, ever. */
describe('self-service trials', () => {
  let t: TestApp;
  let publicKeyPem: string;
  let seq = 0;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0);
    publicKeyPem = (await t.http().get('/api/v1/public-key').expect(200)).body.public_key_pem;
  }, 60_000);
  afterAll(() => t.close());

  /** A new product with `trial` settings (null: no trials). */
  async function product(trial: Record<string, unknown> | null, extra: Record<string, unknown> = {}) {
    seq += 1;
    const code = `TRIAL_${seq}_${Date.now() % 100000}`;
    const res = await t.admin
      .post('/api/v1/admin/products')
      .send({
        code,
        name: `Trial ${seq}`,
        key_prefix: `T${seq}${Date.now() % 1000}`,
        available_features: ['REPORTS', 'EXPORT'],
        trial,
        ...extra,
      })
      .expect(201);
    return res.body as { id: number; code: string; trial: unknown };
  }
  const startTrial = (body: Record<string, unknown>) => t.http().post('/api/v1/trials').send(body);
  const trialsOf = async (productId: number) =>
    Number((await t.sql('SELECT count(*) AS n FROM trials WHERE product_id = $1', [productId]))[0].n);

  it('starts a TRIAL licence bound to this machine: the activation answer, signed, customer name from the hostname, grace 0', async () => {
    const p = await product({ days: 14, max_installations: 1, features: ['REPORTS'] });
    expect(p.trial).toEqual({ days: 14, max_installations: 1, features: ['REPORTS'] });
    const fp = fingerprint('trial-machine-1');
    const before = Date.now();
    const res = await startTrial({ product: p.code.toLowerCase(), machine_fingerprint: fp, hostname: 'laptop-7', os: 'macOS' }).expect(201);
    const lic = res.body.license;
    expect(lic).toMatchObject({ product: p.code, license_type: 'TRIAL', machine_fingerprint: fp, grace_days: 0, features: ['REPORTS'] });
    expect(lic.customer).toEqual({ name: 'laptop-7', email: null });
    const days = (Date.parse(lic.expires_at) - before) / 86_400_000;
    expect(days).toBeGreaterThan(13.99);
    expect(days).toBeLessThan(14.01);
    const signature = Buffer.from((res.body.signature as string).replace('RSA-SHA256:', ''), 'base64');
    expect(verify('sha256', Buffer.from(canonicalize(lic) as string), createPublicKey(publicKeyPem), signature)).toBe(true);
    // The machine holds the seat: validate says valid.
    const validated = await t.http().post('/api/v1/validate').send({ license_key: lic.license_key, machine_fingerprint: fp }).expect(200);
    expect(validated.body).toMatchObject({ valid: true, status: 'active' });
    // license.trial_started only: no license.created, no license.activated.
    const actions = await t.sql(
      'SELECT action, actor_type FROM audit_entries WHERE license_id = (SELECT id FROM licenses WHERE license_key = $1)',
      [lic.license_key],
    );
    expect(actions).toEqual([{ action: 'license.trial_started', actor_type: 'client' }]);
  });

  it('without a hostname the customer is "Trial"', async () => {
    const p = await product({ days: 7 });
    const res = await startTrial({ product: p.code, machine_fingerprint: fingerprint('no-host') }).expect(201);
    expect(res.body.license.customer.name).toBe('Trial');
    expect(res.body.license.features).toEqual(['REPORTS', 'EXPORT']);
  });

  it('one trial per product and machine, ever: TRIAL_ALREADY_USED, also after the trial was revoked or expired', async () => {
    const p = await product({ days: 7 });
    const fp = fingerprint('twice');
    const first = await startTrial({ product: p.code, machine_fingerprint: fp, hostname: 'h' }).expect(201);
    const again = await startTrial({ product: p.code, machine_fingerprint: fp, hostname: 'h' }).expect(409);
    expect(again.body.error.code).toBe('TRIAL_ALREADY_USED');
    const id = (await t.sql('SELECT id FROM licenses WHERE license_key = $1', [first.body.license.license_key]))[0].id as number;
    await t.admin.post(`/api/v1/admin/licenses/${id}/revoke`).send({ reason: 'abuse' }).expect(200);
    expect((await startTrial({ product: p.code, machine_fingerprint: fp }).expect(409)).body.error.code).toBe('TRIAL_ALREADY_USED');
    await t.sql(`UPDATE licenses SET expires_at = now() - interval '30 days' WHERE id = $1`, [id]);
    expect((await startTrial({ product: p.code, machine_fingerprint: fp }).expect(409)).body.error.code).toBe('TRIAL_ALREADY_USED');
    // Another product's trial on the same machine is its own.
    const other = await product({ days: 7 });
    await startTrial({ product: other.code, machine_fingerprint: fp }).expect(201);
    expect(await trialsOf(p.id)).toBe(1);
  });

  it('20 identical requests at once: exactly one 201, the rest TRIAL_ALREADY_USED, one licence', async () => {
    const p = await product({ days: 7 });
    const body = { product: p.code, machine_fingerprint: fingerprint('race'), hostname: 'racer' };
    const results = await Promise.all(Array.from({ length: 20 }, () => startTrial(body)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409).map((r) => r.body.error.code)).toEqual(Array(19).fill('TRIAL_ALREADY_USED'));
    expect(await trialsOf(p.id)).toBe(1);
    expect(Number((await t.sql('SELECT count(*) AS n FROM licenses WHERE product_id = $1', [p.id]))[0].n)).toBe(1);
  });

  it('a product without trials: 400 TRIALS_DISABLED (the default, and after trial is set back to null)', async () => {
    const p = await product(null);
    expect((await startTrial({ product: p.code, machine_fingerprint: fingerprint('x') }).expect(400)).body.error.code).toBe(
      'TRIALS_DISABLED',
    );
    const q = await product({ days: 3 });
    await t.admin.put(`/api/v1/admin/products/${q.id}`).send({ trial: null }).expect(200);
    expect((await startTrial({ product: q.code, machine_fingerprint: fingerprint('x') }).expect(400)).body.error.code).toBe(
      'TRIALS_DISABLED',
    );
    expect((await t.admin.get(`/api/v1/admin/products/${q.id}`).expect(200)).body.trial).toBeNull();
  });

  it('a licence issued later for the same product and e-mail links the newest such trial as converted_from', async () => {
    const p = await product({ days: 7 });
    const keyOf = async (res: { body: { license: { license_key: string } } }) =>
      (await t.sql('SELECT id FROM licenses WHERE license_key = $1', [res.body.license.license_key]))[0].id as number;
    const older = await startTrial({
      product: p.code,
      machine_fingerprint: fingerprint('conv-1'),
      customer_email: 'Buyer@Example.com',
    }).expect(201);
    const newer = await startTrial({
      product: p.code,
      machine_fingerprint: fingerprint('conv-2'),
      customer_email: 'buyer@example.com',
    }).expect(201);
    expect(older.body.license.customer.email).toBe('buyer@example.com');
    const newerId = await keyOf(newer);
    expect(newerId).not.toBe(await keyOf(older));
    const bought = await t.admin
      .post('/api/v1/admin/licenses')
      .send({ product_code: p.code, license_type: 'YEARLY', customer_name: 'Buyer', customer_email: 'buyer@example.com' })
      .expect(201);
    expect((await t.admin.get(`/api/v1/admin/licenses/${bought.body.id}`).expect(200)).body.converted_from).toBe(newerId);
    // Another e-mail, or another product, converts nothing.
    const other = await t.admin
      .post('/api/v1/admin/licenses')
      .send({ product_code: p.code, license_type: 'YEARLY', customer_name: 'Other', customer_email: 'other@example.com' })
      .expect(201);
    expect((await t.admin.get(`/api/v1/admin/licenses/${other.body.id}`).expect(200)).body.converted_from).toBeNull();
    const elsewhere = await t.admin
      .post('/api/v1/admin/licenses')
      .send({ product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Buyer', customer_email: 'buyer@example.com' })
      .expect(201);
    expect((await t.admin.get(`/api/v1/admin/licenses/${elsewhere.body.id}`).expect(200)).body.converted_from).toBeNull();
    // Statistics: two trials of the product, one of them converted.
    const stats = (await t.admin.get('/api/v1/admin/stats').expect(200)).body as { product_code: string; trials: unknown }[];
    expect(stats.find((s) => s.product_code === p.code)?.trials).toEqual({ started: 2, converted: 1 });
  });

  describe('hostile input: 400, never 500, no licence made', () => {
    it.each([
      ['a 1,000-character fingerprint', { machine_fingerprint: 'sha256:' + 'a'.repeat(993) }, 'machine_fingerprint'],
      ['a fingerprint of the wrong form', { machine_fingerprint: 'not-a-fingerprint' }, 'machine_fingerprint'],
      ['a product code that does not exist', { product: 'NO_SUCH_PRODUCT' }, 'product'],
      ['a product code of 1,000 characters', { product: 'P'.repeat(1000) }, 'product'],
      ['a product that is a number', { product: 42 }, 'product'],
      ['an e-mail that is not one', { customer_email: 'not-an-email' }, 'customer_email'],
      ['a hostname with a NUL', { hostname: 'a\u0000b' }, 'hostname'],
    ])('%s -> VALIDATION_ERROR naming the field', async (_name, override, field) => {
      const p = await product({ days: 7 });
      const res = await startTrial({ product: p.code, machine_fingerprint: fingerprint('hostile'), ...override }).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(await trialsOf(p.id)).toBe(0);
    });

    it('an inactive product -> VALIDATION_ERROR naming product', async () => {
      const p = await product({ days: 7 }, { active: false });
      const res = await startTrial({ product: p.code, machine_fingerprint: fingerprint('inactive') }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'product' }] } });
      expect(await trialsOf(p.id)).toBe(0);
    });

    it.each([
      { days: 0 },
      { days: 91 },
      { days: 1.5 },
      { days: '14' },
      {},
      { days: 7, max_installations: 0 },
      { days: 7, features: ['lower'] },
      { days: 7, extra: 1 },
      [],
    ])('product trial %j is refused (VALIDATION_ERROR naming trial)', async (trial) => {
      const res = await t.admin
        .post('/api/v1/admin/products')
        .send({ code: `BAD_TRIAL_${Date.now() % 100000}`, name: 'x', key_prefix: `B${Date.now() % 10000}`, trial })
        .expect(400);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['trial']);
    });
  });
});
