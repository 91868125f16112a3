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

  it('the log is append-only: the database refuses changes and deletions', async () => {
    await expect(t.sql(`UPDATE audit_entries SET action = 'auth.login'`)).rejects.toThrow(/append-only/);
    await expect(t.sql(`DELETE FROM audit_entries`)).rejects.toThrow(/append-only/);
  });
});
