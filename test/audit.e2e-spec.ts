import { createLicense, insertSeat } from './support/factories';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const AUDIT = '/api/v1/admin/audit';

/** The fields of an audit list item these tests read (AuditEntryDto). */
type AuditItem = Record<string, unknown> & { id: number; created_at: string; action: string };

describe('admin audit API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    // Entries of other actors at fixed times in 2001, far from the ones the tests create now.
    await t.sql(
      `INSERT INTO audit_entries (created_at, action, actor_type, actor, ip, license_id, product_code, details) VALUES
        ('2001-01-01T00:00:00Z', 'auth.login', 'dashboard', 'admin', '10.0.0.5', NULL, NULL, '{}'),
        ('2001-01-02T00:00:00Z', 'license.activated', 'client', '203.0.113.7', '203.0.113.7', 777, 'POS_RETAIL', '{"hostname":"till-01"}'),
        ('2001-01-03T00:00:00Z', 'license.activation_denied', 'client', '203.0.113.8', '203.0.113.8', 777, 'POS_RETAIL', '{"code":"KEY_EXPIRED"}'),
        ('2001-01-04T00:00:00Z', 'product.updated', 'system', 'system', NULL, NULL, 'ERP_SUITE', '{}'),
        ('2001-01-04T00:00:00Z', 'auth.logout', 'dashboard', 'admin', '10.0.0.5', NULL, NULL, '{}')`,
    );
  }, 60_000);
  afterAll(() => t.close());

  const audit = async (query = '') => {
    const res = await t.admin.get(`${AUDIT}${query ? `?${query}` : ''}`).expect(200);
    return { items: res.body as AuditItem[], total: Number(res.headers['x-total-count']), res };
  };

  it('401 UNAUTHORIZED without the API key', async () => {
    expect((await t.http().get(AUDIT).expect(401)).body.error.code).toBe('UNAUTHORIZED');
  });

  it('shows every licence action with the documented entry shape, newest first', async () => {
    const { id } = await createLicense(t, { customer_name: 'Audited' });
    const seat = await insertSeat(t, id);
    await t.admin.put(`/api/v1/admin/licenses/${id}`).send({ active: false }).expect(200);
    await t.admin.put(`/api/v1/admin/licenses/${id}`).send({ active: true }).expect(200);
    await t.admin.post(`/api/v1/admin/licenses/${id}/release`).send({ reason: 'moved' }).expect(200);
    await t.admin.post(`/api/v1/admin/licenses/${id}/revoke`).send({ reason: 'done' }).expect(200);
    const { items, total } = await audit(`license_id=${id}`);
    expect(total).toBe(5);
    expect(items.map((e) => e.action)).toEqual([
      'license.revoked',
      'license.released',
      'license.updated',
      'license.updated',
      'license.created',
    ]);
    expect(items[0]).toEqual({
      id: expect.any(Number),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      action: 'license.revoked',
      actor_type: 'admin_api',
      actor: expect.stringMatching(/^key:[0-9a-f]{8}$/),
      ip: expect.any(String),
      license_id: id,
      product_code: 'POS_RETAIL',
      details: { reason: 'done' },
    });
    expect(items[1].details).toEqual({ machine_fingerprints: [seat.machine_fingerprint], released: 1, reason: 'moved' });
    const ids = items.map((e) => e.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
  });

  it('lists everything newest first, ordering equal times by id', async () => {
    const { items, total } = await audit('limit=1000');
    expect(total).toBe(items.length);
    for (let i = 1; i < items.length; i++) {
      const [a, b] = [items[i - 1], items[i]];
      expect(Date.parse(a.created_at) > Date.parse(b.created_at) || (a.created_at === b.created_at && a.id > b.id)).toBe(true);
    }
    const tie = items.filter((e) => e.created_at === '2001-01-04T00:00:00.000Z').map((e) => e.action);
    expect(tie).toEqual(['auth.logout', 'product.updated']);
  });

  it.each([
    ['action=license.activation_denied', ['license.activation_denied']],
    ['actor_type=client', ['license.activation_denied', 'license.activated']],
    // Within 2001: the first user's staff.joined (by the system) is recorded when the app starts.
    ['actor_type=system&to=2001-12-31T00:00:00Z', ['product.updated']],
    ['actor_type=dashboard', ['auth.logout', 'auth.login']],
    ['license_id=777', ['license.activation_denied', 'license.activated']],
    ['license_id=777&action=license.activated', ['license.activated']],
    ['from=2001-01-02T00:00:00Z&to=2001-01-03T00:00:00Z', ['license.activation_denied', 'license.activated']],
    ['from=2001-01-03T00:00:00Z&to=2001-01-03T00:00:00Z', ['license.activation_denied']],
    ['to=2001-01-01T00:00:00Z', ['auth.login']],
    ['from=2001-01-03T12:00:00%2B01:00&to=2001-12-31T00:00:00Z', ['auth.logout', 'product.updated']],
    ['license_id=424242', []],
  ])('filters: %s', async (query, actions) => {
    const { items, total } = await audit(query);
    expect(items.map((e) => e.action)).toEqual(actions);
    expect(total).toBe(actions.length);
  });

  it('from alone excludes older entries', async () => {
    const { items } = await audit('from=2001-01-04T00:00:00Z&limit=1000');
    expect(items.some((e) => e.action === 'auth.login')).toBe(false);
    expect(items.filter((e) => e.created_at.startsWith('2001-'))).toHaveLength(2);
  });

  it('pages with limit and offset; X-Total-Count counts all matches', async () => {
    const all = await audit('from=2001-01-01T00:00:00Z&to=2001-12-31T00:00:00Z');
    expect(all.total).toBe(5);
    const page = await audit('from=2001-01-01T00:00:00Z&to=2001-12-31T00:00:00Z&limit=2&offset=1');
    expect(page.items.map((e) => e.id)).toEqual(all.items.slice(1, 3).map((e) => e.id));
    expect(page.total).toBe(5);
    expect(page.res.headers['access-control-expose-headers']).toContain('X-Total-Count');
  });

  it.each([
    ['license_id=0', 'license_id'],
    ['license_id=-1', 'license_id'],
    ['license_id=abc', 'license_id'],
    ['license_id=1.5', 'license_id'],
    ['license_id=99999999999', 'license_id'],
    ['action=license.deleted', 'action'],
    ['action=LICENSE.CREATED', 'action'],
    ['actor_type=robot', 'actor_type'],
    ['from=yesterday', 'from'],
    ['from=2001-01-01', 'from'],
    ['to=2001-02-30T00:00:00Z', 'to'],
    ['to=2001-01-01T00:00:00', 'to'],
    ['from=2001-01-02T00:00:00Z&to=2001-01-01T00:00:00Z', 'from'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['offset=-5', 'offset'],
    ['user=admin', 'user'],
  ])('400 VALIDATION_ERROR for %s', async (query, field) => {
    const res = await t.admin.get(`${AUDIT}?${query}`).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res.body)).toContain(field);
  });

  describe('actor filter', () => {
    beforeAll(async () => {
      // Actors of every kind, in 2002: a customer in the portal, a store, a token, a staff member.
      await t.sql(
        `INSERT INTO audit_entries (created_at, action, actor_type, actor, ip, license_id, product_code, details) VALUES
          ('2002-01-01T00:00:00Z', 'license.deactivated', 'customer', 'procurement.department.with.a.very.long.local.part@example-company-international.com', '198.51.100.4', 778, 'POS_RETAIL', '{}'),
          ('2002-01-02T00:00:00Z', 'license.created', 'store', 'store:stripe', NULL, 778, 'POS_RETAIL', '{}'),
          ('2002-01-03T00:00:00Z', 'token.created', 'admin_api', 'token:billing', '10.0.0.9', NULL, NULL, '{}'),
          ('2002-01-04T00:00:00Z', 'license.updated', 'dashboard', 'staff:mira', '10.0.0.6', 778, 'POS_RETAIL', '{}'),
          ('2002-01-05T00:00:00Z', 'auth.login', 'dashboard', 'staff:mira', '10.0.0.6', NULL, NULL, '{}')`,
      );
    });

    it.each([
      ['actor=admin&to=2001-12-31T00:00:00Z', ['auth.logout', 'auth.login']],
      ['actor=staff:mira', ['auth.login', 'license.updated']],
      ['actor=staff:mira&action=auth.login', ['auth.login']],
      ['actor=token:billing', ['token.created']],
      ['actor=store:stripe', ['license.created']],
      ['actor=procurement.department.with.a.very.long.local.part%40example-company-international.com', ['license.deactivated']],
      ['actor=203.0.113.7', ['license.activated']],
      // Exact: not a prefix, not another case.
      ['actor=staff:mir', []],
      ['actor=STAFF:MIRA', []],
      ['actor=staff', []],
    ])('matches exactly: %s', async (query, actions) => {
      const { items, total } = await audit(query);
      expect(items.map((e) => e.action)).toEqual(actions);
      expect(total).toBe(actions.length);
    });
  });

  describe('product filter', () => {
    let pos: number;
    let erp: number;
    beforeAll(async () => {
      pos = (await createLicense(t, { product_code: 'POS_RETAIL', customer_name: 'Product filter POS' })).id;
      erp = (await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Product filter ERP' })).id;
      await t.admin.post(`/api/v1/admin/licenses/${erp}/revoke`).send({ reason: 'product filter' }).expect(200);
    });

    it("matches the product's licences' entries and its own, never another product's", async () => {
      const [{ id: erpId }] = await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'ERP_SUITE'`);
      const { items, total } = await audit('product=ERP_SUITE&limit=1000');
      expect(total).toBe(items.length);
      expect(items.filter((e) => e.license_id === erp).map((e) => e.action)).toEqual(['license.revoked', 'license.created']);
      expect(items.some((e) => e.license_id === pos)).toBe(false);
      const [{ n }] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM audit_entries a WHERE a.license_id IN (SELECT id FROM licenses WHERE product_id = $1)
           OR (a.license_id IS NULL AND a.details->>'product_id' = $1::text)`,
        [erpId],
      );
      expect(total).toBe(n);
      const own = await audit('product=POS_RETAIL&limit=1000');
      expect(own.items.some((e) => e.license_id === pos)).toBe(true);
      expect(own.items.some((e) => e.license_id === erp)).toBe(false);
    });

    it('follows the product by id: after a rename the new code finds its entries and the old code nothing', async () => {
      await t.sql(`INSERT INTO products (code, name, key_prefix) VALUES ('RENAMED_OLD', 'Renamed', 'REN')`);
      const renamed = (await createLicense(t, { product_code: 'RENAMED_OLD', customer_name: 'Renamed product' })).id;
      await t.sql(`UPDATE products SET code = 'RENAMED_NEW' WHERE code = 'RENAMED_OLD'`);
      expect((await audit('product=RENAMED_NEW')).items.map((e) => e.license_id)).toEqual([renamed]);
      expect((await audit('product=RENAMED_OLD')).items).toEqual([]);
    });

    it.each(['NO_SUCH_PRODUCT', 'pos_retail', 'POS'])(
      'an unknown product code (%s) matches nothing instead of being ignored',
      async (code) => {
        const { items, total } = await audit(`product=${code}`);
        expect([items, total]).toEqual([[], 0]);
      },
    );

    it('combines with the other filters, and the export takes it too', async () => {
      const { items } = await audit(`product=ERP_SUITE&action=license.revoked&license_id=${erp}`);
      expect(items.map((e) => e.action)).toEqual(['license.revoked']);
      expect((await audit(`product=POS_RETAIL&license_id=${erp}`)).items).toEqual([]);
      const exported = await t.admin.get(`${AUDIT}/export?format=ndjson&product=ERP_SUITE&license_id=${erp}`).expect(200);
      const rows = exported.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { action: string });
      expect(rows.map((r) => r.action)).toEqual(['license.revoked', 'license.created']);
      const none = await t.admin.get(`${AUDIT}/export?format=ndjson&product=NO_SUCH_PRODUCT`).expect(200);
      expect(none.text.trim()).toBe('');
      const byActor = await t.admin.get(`${AUDIT}/export?format=csv&actor=token:billing`).expect(200);
      expect(byActor.text.trim().split('\n')).toHaveLength(2);
      expect(byActor.text).toContain('token.created');
    });
  });

  it.each([
    [`product=${'P'.repeat(33)}`, 'product'],
    ['product=POS%0ARETAIL', 'product'],
    ['product=POS%00', 'product'],
    [`actor=${'a'.repeat(321)}`, 'actor'],
    ['actor=staff:mira%0D%0Ax', 'actor'],
    ['actor=staff%1B[31m', 'actor'],
    ['actor=a%00b', 'actor'],
    ['actor=a&actor=b', 'actor'],
  ])('400 VALIDATION_ERROR for the new filters: %s', async (query, field) => {
    for (const path of [AUDIT, `${AUDIT}/export`]) {
      const res = await t.admin.get(`${path}?${query}`).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(res.body)).toContain(field);
    }
  });

  it('the log is append-only: the database refuses changes and deletions', async () => {
    await expect(t.sql(`UPDATE audit_entries SET action = 'auth.login'`)).rejects.toThrow(/append-only/);
    await expect(t.sql(`DELETE FROM audit_entries`)).rejects.toThrow(/append-only/);
  });
});
