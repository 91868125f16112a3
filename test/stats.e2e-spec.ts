import { createLicense, insertSeat, setLicenseExpiry } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const STATS = '/api/v1/admin/stats';
const DAY_MS = 86_400_000;
const zeroTypes = { TRIAL: 0, MONTHLY: 0, QUARTERLY: 0, YEARLY: 0, PERPETUAL: 0 };

describe('admin stats API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.admin.post('/api/v1/admin/products').send({ code: 'STATS_P', name: 'Stats product', key_prefix: 'SP' }).expect(201);
  }, 60_000);
  afterAll(() => t.close());

  const statsOf = async (code = 'STATS_P') => {
    const res = await t.admin.get(STATS).expect(200);
    return res.body.find((s: { product_code: string }) => s.product_code === code);
  };

  it('401 UNAUTHORIZED without the API key', async () => {
    expect((await t.http().get(STATS).expect(401)).body.error.code).toBe('UNAUTHORIZED');
  });

  it('lists every product, those without licences included, with zero counts', async () => {
    const res = await t.admin.get(STATS).expect(200);
    expect(res.body.map((s: { product_code: string }) => s.product_code)).toEqual(['POS_RETAIL', 'ERP_SUITE', 'FISCAL_BRIDGE', 'STATS_P']);
    expect(await statsOf()).toEqual({
      product_code: 'STATS_P',
      product_name: 'Stats product',
      licenses: { total: 0, active: 0, grace: 0, expired: 0, revoked: 0, suspended: 0 },
      activations: { current: 0, last_30_days: 0, released_by_heartbeat_last_30_days: 0 },
      by_type: zeroTypes,
      trials: { started: 0, converted: 0 },
    });
  });

  it('follows creation, suspension, reinstatement, revocation and expiry', async () => {
    const a = await createLicense(t, { product_code: 'STATS_P', license_type: 'MONTHLY' });
    const b = await createLicense(t, { product_code: 'STATS_P', license_type: 'MONTHLY' });
    const c = await createLicense(t, { product_code: 'STATS_P', license_type: 'PERPETUAL' });
    expect((await statsOf()).licenses).toEqual({ total: 3, active: 3, grace: 0, expired: 0, revoked: 0, suspended: 0 });
    expect((await statsOf()).by_type).toEqual({ ...zeroTypes, MONTHLY: 2, PERPETUAL: 1 });

    await t.admin.put(`/api/v1/admin/licenses/${a.id}`).send({ active: false }).expect(200);
    expect((await statsOf()).licenses).toMatchObject({ total: 3, active: 2, suspended: 1 });
    await t.admin.put(`/api/v1/admin/licenses/${a.id}`).send({ active: true }).expect(200);
    expect((await statsOf()).licenses).toMatchObject({ total: 3, active: 3, suspended: 0 });

    await t.admin.post(`/api/v1/admin/licenses/${b.id}/revoke`).send({ reason: 'stats' }).expect(200);
    expect((await statsOf()).licenses).toMatchObject({ total: 3, active: 2, revoked: 1 });

    await setLicenseExpiry(t, a.id, new Date(Date.now() - DAY_MS), 7);
    expect((await statsOf()).licenses).toEqual({ total: 3, active: 1, grace: 1, expired: 0, revoked: 1, suspended: 0 });
    await setLicenseExpiry(t, a.id, new Date(Date.now() - 8 * DAY_MS), 7);
    expect((await statsOf()).licenses).toEqual({ total: 3, active: 1, grace: 0, expired: 1, revoked: 1, suspended: 0 });
    // Type changes move the licence between by_type buckets.
    await t.admin.put(`/api/v1/admin/licenses/${c.id}`).send({ license_type: 'YEARLY' }).expect(200);
    expect((await statsOf()).by_type).toEqual({ ...zeroTypes, MONTHLY: 2, YEARLY: 1 });
    // Other products are not affected.
    expect((await statsOf('FISCAL_BRIDGE')).licenses.total).toBe(0);
  });

  it('counts current seats and bindings of the last 30 days', async () => {
    const before = await statsOf();
    const { id } = await createLicense(t, { product_code: 'STATS_P', limits: { max_installations: 5 } });
    await insertSeat(t, id); // current, recent
    await insertSeat(t, id, { activated_at: new Date(Date.now() - 40 * DAY_MS) }); // current, old
    await insertSeat(t, id, { activated_at: new Date(Date.now() - 5 * DAY_MS), released_at: new Date(Date.now() - DAY_MS) }); // released, recent
    await insertSeat(t, id, { activated_at: new Date(Date.now() - 60 * DAY_MS), released_at: new Date(Date.now() - 50 * DAY_MS) }); // released, old
    const after = await statsOf();
    expect(after.activations).toEqual({
      ...before.activations,
      current: before.activations.current + 2,
      last_30_days: before.activations.last_30_days + 2,
    });

    await t.admin.post(`/api/v1/admin/licenses/${id}/release`).send({}).expect(200);
    expect((await statsOf()).activations).toEqual({
      ...before.activations,
      current: before.activations.current,
      last_30_days: before.activations.last_30_days + 2,
    });
  });
});
