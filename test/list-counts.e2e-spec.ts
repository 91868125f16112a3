import { EXACT_COUNT_LIMIT } from '../src/database/paged-list';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Lists count their matches exactly up to EXACT_COUNT_LIMIT, so the cost of a page does not grow with
 * millions of audit entries; beyond it X-Total-Count is the planner's estimate, flagged with
 * X-Total-Count-Estimated: true.
 */
describe('list totals', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.admin.post('/api/v1/admin/products').send({ code: 'COUNTED', name: 'Counted', key_prefix: 'CNT' }).expect(201);
  }, 60_000);
  afterAll(() => t.close());

  const auditFor = (licenseId: number, n: number) =>
    t.sql(
      `INSERT INTO audit_entries (action, actor_type, actor, license_id, product_code) SELECT 'license.updated', 'system', 'system', $1, 'COUNTED' FROM generate_series(1, $2)`,
      [licenseId, n],
    );
  const licences = (n: number, name: string) =>
    t.sql(
      `INSERT INTO licenses (product_id, license_key, license_type, customer_name)
       SELECT p.id, 'CNT-' || upper(substr(md5(random()::text), 1, 20)), 'PERPETUAL', $2 FROM products p, generate_series(1, $1) WHERE p.code = 'COUNTED'`,
      [n, name],
    );

  it(`counts exactly up to ${EXACT_COUNT_LIMIT} audit matches, without the estimate header`, async () => {
    await auditFor(424242, EXACT_COUNT_LIMIT);
    const res = await t.admin.get('/api/v1/admin/audit?license_id=424242&limit=2').expect(200);
    expect(res.headers['x-total-count']).toBe(String(EXACT_COUNT_LIMIT));
    expect(res.headers['x-total-count-estimated']).toBeUndefined();
    expect(res.body).toHaveLength(2);
    expect(res.headers['access-control-expose-headers']).toBe('X-Total-Count, X-Total-Count-Estimated, Link');
  });

  it('sends an estimate, flagged, beyond that', async () => {
    await auditFor(434343, EXACT_COUNT_LIMIT + 1);
    const res = await t.admin.get('/api/v1/admin/audit?license_id=434343&limit=2').expect(200);
    expect(res.headers['x-total-count-estimated']).toBe('true');
    expect(Number(res.headers['x-total-count'])).toBeGreaterThan(EXACT_COUNT_LIMIT);
    expect(res.body).toHaveLength(2);
    const all = await t.admin.get('/api/v1/admin/audit?limit=1').expect(200);
    expect(all.headers['x-total-count-estimated']).toBe('true');
  });

  it('does the same for licences, and stays exact for a narrow filter', async () => {
    await licences(EXACT_COUNT_LIMIT + 5, 'Counted Customer');
    await licences(3, 'Narrow Match');
    const wide = await t.admin.get('/api/v1/admin/licenses?product=COUNTED&limit=3').expect(200);
    expect(wide.headers['x-total-count-estimated']).toBe('true');
    expect(Number(wide.headers['x-total-count'])).toBeGreaterThan(EXACT_COUNT_LIMIT);
    expect(wide.body).toHaveLength(3);
    const narrow = await t.admin.get('/api/v1/admin/licenses?product=COUNTED&q=narrow%20match').expect(200);
    expect(narrow.headers['x-total-count']).toBe('3');
    expect(narrow.headers['x-total-count-estimated']).toBeUndefined();
    expect(narrow.body.map((l: { customer_name: string }) => l.customer_name)).toEqual(['Narrow Match', 'Narrow Match', 'Narrow Match']);
  });

  it('still counts a page past the end (empty body)', async () => {
    const res = await t.admin.get('/api/v1/admin/licenses?q=narrow%20match&offset=50').expect(200);
    expect(res.body).toEqual([]);
    expect(res.headers['x-total-count']).toBe('3');
    const audit = await t.admin.get('/api/v1/admin/audit?license_id=424242&offset=5000').expect(200);
    expect(audit.body).toEqual([]);
    expect(audit.headers['x-total-count']).toBe(String(EXACT_COUNT_LIMIT));
  });
});
