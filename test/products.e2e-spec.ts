import { createTestApp, TestApp } from './support/test-app';
import { requestAuditCount } from './support/factories';

describe('admin products API', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const fieldsOf = (body: { error: { details?: { fields?: { field: string }[] } } }) =>
    body.error.details?.fields?.map((f) => f.field) ?? [];

  describe('X-API-Key', () => {
    it('401 UNAUTHORIZED without the header', async () => {
      const res = await t.http().get('/api/v1/admin/products').expect(401);
      expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'Missing X-API-Key or Authorization: Bearer header' } });
    });

    it('401 UNAUTHORIZED with a wrong key', async () => {
      const res = await t.http().get('/api/v1/admin/products').set('X-API-Key', 'wrong').expect(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    });

    it('checks the key before validating the body', async () => {
      await t.http().post('/api/v1/admin/products').send({ nonsense: true }).expect(401);
    });
  });

  it('lists the three seed products with their documented fields', async () => {
    const res = await t.admin.get('/api/v1/admin/products').expect(200);
    expect(res.body).toHaveLength(3);
    for (const p of res.body) {
      expect(p).toEqual(
        expect.objectContaining({
          id: expect.any(Number),
          code: expect.any(String),
          name: expect.any(String),
          key_prefix: expect.any(String),
          active: true,
        }),
      );
      expect(p.default_limits.max_installations).toBe(1);
      expect(p.available_features.length).toBeGreaterThan(1);
      for (const f of p.available_features) expect(f).toMatch(/^[A-Z][A-Z0-9_]*$/);
    }
  });

  it('creates a product (201), gets it, and writes a product.created audit entry', async () => {
    const res = await t.admin
      .post('/api/v1/admin/products')
      .send({
        code: 'CAD_PRO',
        name: 'CAD Pro',
        key_prefix: 'CAD',
        default_limits: { max_installations: 3 },
        available_features: ['EXPORT_DWG'],
      })
      .expect(201);
    expect(res.body).toMatchObject({
      code: 'CAD_PRO',
      key_prefix: 'CAD',
      default_limits: { max_installations: 3 },
      available_features: ['EXPORT_DWG'],
      active: true,
    });
    await t.admin.get(`/api/v1/admin/products/${res.body.id}`).expect(200);
    const audit = await t.sql("SELECT * FROM audit_entries WHERE action = 'product.created' AND product_code = 'CAD_PRO'");
    expect(audit).toHaveLength(1);
    expect(audit[0].actor_type).toBe('admin_api');
    expect(audit[0].actor).toMatch(/^key:[0-9a-f]{8}$/);
  });

  it('defaults default_limits to max_installations 1', async () => {
    const res = await t.admin.post('/api/v1/admin/products').send({ code: 'MINI', name: 'Mini', key_prefix: 'MN' }).expect(201);
    expect(res.body.default_limits).toEqual({ max_installations: 1 });
  });

  it('409 CONFLICT on a duplicate code or key_prefix, with nothing written', async () => {
    const before = await requestAuditCount(t);
    const dupCode = await t.admin.post('/api/v1/admin/products').send({ code: 'POS_RETAIL', name: 'x', key_prefix: 'ZZ' }).expect(409);
    expect(dupCode.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'code' } });
    const dupPrefix = await t.admin.post('/api/v1/admin/products').send({ code: 'OTHER', name: 'x', key_prefix: 'POS' }).expect(409);
    expect(dupPrefix.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'key_prefix' } });
    expect(await requestAuditCount(t)).toEqual(before);
  });

  it('two concurrent creates of the same code: one 201, one 409', async () => {
    const body = { code: 'RACE_ME', name: 'Race', key_prefix: 'RC' };
    const results = await Promise.all([
      t.admin.post('/api/v1/admin/products').send(body),
      t.admin.post('/api/v1/admin/products').send(body),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  it.each([
    [{ name: 'x', key_prefix: 'AB' }, 'code'],
    [{ code: 'lower', name: 'x', key_prefix: 'AB' }, 'code'],
    [{ code: 'A', name: 'x', key_prefix: 'AB' }, 'code'],
    [{ code: 7, name: 'x', key_prefix: 'AB' }, 'code'],
    [{ code: 'OK_CODE', key_prefix: 'AB' }, 'name'],
    [{ code: 'OK_CODE', name: '', key_prefix: 'AB' }, 'name'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'a' }, 'key_prefix'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'TOOLONGPX' }, 'key_prefix'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', default_limits: [] }, 'default_limits'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', default_limits: { 'Bad-Name': 1 } }, 'default_limits'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', default_limits: { seats: -1 } }, 'default_limits'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', default_limits: { seats: 2147483648 } }, 'default_limits'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', default_limits: { seats: 1.5 } }, 'default_limits'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', available_features: ['lower'] }, 'available_features'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', available_features: ['A_B', 'A_B'] }, 'available_features'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', available_features: 'A_B' }, 'available_features'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', active: 'yes' }, 'active'],
    [{ code: 'OK_CODE', name: 'x\u0000y', key_prefix: 'AB' }, 'name'],
    [{ code: 'OK_CODE', name: 'x', key_prefix: 'AB', surprise: 1 }, 'surprise'],
  ])('400 VALIDATION_ERROR for %j naming %s', async (body, field) => {
    const res = await t.admin.post('/api/v1/admin/products').send(body).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res.body)).toContain(field);
  });

  it('PUT changes a product partially and audits it', async () => {
    const created = await t.admin.post('/api/v1/admin/products').send({ code: 'EDIT_ME', name: 'Before', key_prefix: 'ED' }).expect(201);
    const res = await t.admin.put(`/api/v1/admin/products/${created.body.id}`).send({ name: 'After', active: false }).expect(200);
    expect(res.body).toMatchObject({ code: 'EDIT_ME', name: 'After', key_prefix: 'ED', active: false });
    const audit = await t.sql<{ details: Record<string, unknown> }>(
      "SELECT details FROM audit_entries WHERE action = 'product.updated' AND product_code = 'EDIT_ME'",
    );
    expect(audit).toHaveLength(1);
    expect(audit[0].details.changes).toEqual({ name: 'After', active: false });
  });

  it('PUT rejects unknown fields, bad values, duplicates, bad and unknown ids', async () => {
    await t.admin.put('/api/v1/admin/products/1').send({ colour: 'red' }).expect(400);
    await t.admin.put('/api/v1/admin/products/1').send({ key_prefix: 'x' }).expect(400);
    await t.admin.put('/api/v1/admin/products/1').send({ key_prefix: 'ERP' }).expect(409);
    await t.admin.put('/api/v1/admin/products/abc').send({ name: 'x' }).expect(400);
    await t.admin.put('/api/v1/admin/products/0').send({ name: 'x' }).expect(400);
    await t.admin.put('/api/v1/admin/products/-1').send({ name: 'x' }).expect(400);
    await t.admin.put('/api/v1/admin/products/99999999999').send({ name: 'x' }).expect(400);
    const missing = await t.admin.put('/api/v1/admin/products/999999').send({ name: 'x' }).expect(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
  });
});
