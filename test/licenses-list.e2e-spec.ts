import { createLicense, setLicenseExpiry } from './support/factories';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const LICENSES = '/api/v1/admin/licenses';
const DAY_MS = 86_400_000;
const ids = (body: { id: number }[]) => body.map((l) => l.id);

describe('admin licences API: list, filters and paging', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    // Products of their own, so each test's counts do not depend on the others.
    for (const [code, prefix] of [
      ['LIST_A', 'LA'],
      ['LIST_B', 'LB'],
      ['STATUSES', 'ST'],
      ['SEARCH', 'SR'],
      ['BULK', 'BK'],
    ]) {
      await t.admin
        .post('/api/v1/admin/products')
        .send({ code, name: `Product ${code}`, key_prefix: prefix, available_features: ['F_ONE'] })
        .expect(201);
    }
  }, 60_000);
  afterAll(() => t.close());

  const list = async (query: string) => {
    const res = await t.admin.get(`${LICENSES}?${query}`).expect(200);
    return { items: res.body as (Record<string, unknown> & { id: number })[], total: Number(res.headers['x-total-count']), res };
  };

  it('returns the documented list items with status, newest first, and X-Total-Count (exposed to browsers)', async () => {
    const first = await createLicense(t, {
      product_code: 'LIST_A',
      license_type: 'MONTHLY',
      customer_name: 'First',
      customer_email: 'first@example.rs',
    });
    const second = await createLicense(t, { product_code: 'LIST_A', license_type: 'PERPETUAL', customer_name: 'Second' });
    const third = await createLicense(t, { product_code: 'LIST_A', license_type: 'TRIAL', customer_name: 'Third' });
    const { items, total, res } = await list('product=LIST_A');
    expect(total).toBe(3);
    expect(res.headers['access-control-expose-headers']).toContain('X-Total-Count');
    expect(ids(items)).toEqual([third.id, second.id, first.id]);
    expect(items[2]).toEqual({
      id: first.id,
      product_code: 'LIST_A',
      license_key: first.license_key,
      license_type: 'MONTHLY',
      customer_name: 'First',
      customer_email: 'first@example.rs',
      expires_at: expect.stringMatching(/Z$/),
      active: true,
      revoked: false,
      status: 'active',
      created_at: expect.stringMatching(/Z$/),
    });
    expect(items[1].expires_at).toBeNull();
  });

  it('orders by created_at, then id, both descending', async () => {
    const a = await createLicense(t, { product_code: 'LIST_B' });
    const b = await createLicense(t, { product_code: 'LIST_B' });
    const c = await createLicense(t, { product_code: 'LIST_B' });
    // b is made the oldest; a and c share one creation time, so the id decides.
    await t.sql(`UPDATE licenses SET created_at = '2026-01-01T00:00:00Z' WHERE id = $1`, [b.id]);
    await t.sql(`UPDATE licenses SET created_at = '2026-02-01T00:00:00Z' WHERE id = ANY($1)`, [[a.id, c.id]]);
    expect(ids((await list('product=LIST_B')).items)).toEqual([c.id, a.id, b.id]);
  });

  it('filters by product (an unknown product matches nothing)', async () => {
    const { items } = await list('product=LIST_A');
    expect(items.every((l) => l.product_code === 'LIST_A')).toBe(true);
    expect(await list('product=NO_SUCH_PRODUCT')).toMatchObject({ items: [], total: 0 });
  });

  it('filters by license_type, combined with product', async () => {
    const { items, total } = await list('product=LIST_A&license_type=PERPETUAL');
    expect(total).toBe(1);
    expect(items[0]).toMatchObject({ customer_name: 'Second', license_type: 'PERPETUAL' });
    expect((await list('product=LIST_A&license_type=YEARLY')).total).toBe(0);
  });

  describe('status filter', () => {
    const byStatus: Record<string, number> = {};
    beforeAll(async () => {
      for (const status of ['active', 'grace', 'expired', 'suspended', 'revoked', 'perpetual']) {
        byStatus[status] = (
          await createLicense(t, {
            product_code: 'STATUSES',
            license_type: status === 'perpetual' ? 'PERPETUAL' : 'YEARLY',
            customer_name: `Status ${status}`,
          })
        ).id;
      }
      await setLicenseExpiry(t, byStatus.grace, new Date(Date.now() - DAY_MS), 7);
      await setLicenseExpiry(t, byStatus.expired, new Date(Date.now() - 10 * DAY_MS), 7);
      await t.admin.put(`${LICENSES}/${byStatus.suspended}`).send({ active: false }).expect(200);
      await t.admin.post(`${LICENSES}/${byStatus.revoked}/revoke`).send({ reason: 'test' }).expect(200);
    }, 60_000);

    it.each([
      ['active', ['active', 'perpetual']],
      ['grace', ['grace']],
      ['expired', ['expired']],
      ['suspended', ['suspended']],
      ['revoked', ['revoked']],
    ])('status=%s returns exactly those licences, each showing that status', async (status, names) => {
      const { items, total } = await list(`product=STATUSES&status=${status}`);
      expect(total).toBe(names.length);
      expect(ids(items).sort()).toEqual(names.map((n) => byStatus[n]).sort());
      expect(items.every((l) => l.status === status)).toBe(true);
    });

    it('revoked wins over suspended and expired', async () => {
      const { id } = await createLicense(t, { product_code: 'STATUSES', customer_name: 'All at once' });
      await setLicenseExpiry(t, id, new Date(Date.now() - 30 * DAY_MS), 0);
      await t.admin.put(`${LICENSES}/${id}`).send({ active: false }).expect(200);
      expect((await t.admin.get(`${LICENSES}/${id}`)).body.status).toBe('suspended');
      await t.admin.post(`${LICENSES}/${id}/revoke`).send({ reason: 'all' }).expect(200);
      expect((await t.admin.get(`${LICENSES}/${id}`)).body.status).toBe('revoked');
      expect(ids((await list('product=STATUSES&status=revoked')).items)).toContain(id);
      expect(ids((await list('product=STATUSES&status=suspended')).items)).not.toContain(id);
      expect(ids((await list('product=STATUSES&status=expired')).items)).not.toContain(id);
    });
  });

  describe('status at the boundaries of expires_at and grace (GET and the list filter agree)', () => {
    const seconds = (n: number) => n * 1000;
    it.each([
      ['expires in a minute', seconds(60), 7, 'active'],
      ['expired one second ago', -seconds(1), 7, 'grace'],
      ['in grace, a minute before it ends', -(7 * DAY_MS - seconds(60)), 7, 'grace'],
      ['one second after grace', -(7 * DAY_MS + seconds(1)), 7, 'expired'],
      ['no grace days, one second after expiry', -seconds(1), 0, 'expired'],
      ['grace of 365 days, 364 days after expiry', -364 * DAY_MS, 365, 'grace'],
    ])('%s: %s', async (_label, offsetMs, graceDays, status) => {
      const { id } = await createLicense(t, { product_code: 'STATUSES', customer_name: `Boundary ${_label}` });
      await setLicenseExpiry(t, id, new Date(Date.now() + offsetMs), graceDays);
      expect((await t.admin.get(`${LICENSES}/${id}`).expect(200)).body.status).toBe(status);
      const filtered = await list(`product=STATUSES&status=${status}&limit=1000`);
      expect(ids(filtered.items)).toContain(id);
      expect(filtered.items.find((l) => l.id === id)?.status).toBe(status);
    });
  });

  describe('q: literal, case-insensitive substring of customer name, e-mail or key', () => {
    const made: Record<string, { id: number; license_key: string }> = {};
    beforeAll(async () => {
      const customers = {
        percent: { customer_name: '100% Shop' },
        underscore: { customer_name: 'Under_score d.o.o.' },
        backslash: { customer_name: 'Back\\slash' },
        plain: { customer_name: '1000 Shop', customer_email: 'Orders@Thousand.example' },
        accents: { customer_name: 'ĐURĐEVIĆ' },
      };
      for (const [name, input] of Object.entries(customers)) made[name] = await createLicense(t, { product_code: 'SEARCH', ...input });
    }, 60_000);
    const search = async (q: string) => ids((await list(`product=SEARCH&q=${encodeURIComponent(q)}`)).items).sort();
    const idsOf = (...names: string[]) => names.map((n) => made[n].id).sort();

    it.each([
      ['% is not a wildcard', '%', ['percent']],
      ['0% matches only the literal text', '0%', ['percent']],
      ['_ is not a wildcard', '_', ['underscore']],
      ['r_s does not match "rs"', 'r_s', ['underscore']],
      ['a backslash is literal', '\\', ['backslash']],
      ['case-insensitive on the name', 'SHOP', ['percent', 'plain']],
      ['case-insensitive on the e-mail', 'orders@thousand', ['plain']],
      ['non-ASCII letters fold case too', 'đurđević', ['accents']],
      ['đ typed as d (no diacritics)', 'durdevic', ['accents']],
      ['đ typed as dj, as Serbian and Croatian keyboards write it', 'djurdjevic', ['accents']],
      ['dj in capitals, other accents typed', 'DJURDJEVIĆ', ['accents']],
      ['a substring in the middle of a word', 'nder', ['underscore']],
      ['no match', 'nobody', []],
    ])('%s (q=%s)', async (_label, q, names) => {
      expect(await search(q)).toEqual(idsOf(...names));
    });

    it('matches part of a licence key in any case', async () => {
      const key = made.plain.license_key;
      expect(await search(key.slice(3, 14).toLowerCase())).toEqual(idsOf('plain'));
      expect(await search(key)).toEqual(idsOf('plain'));
    });

    it('combines with the other filters', async () => {
      expect(await search('shop')).toHaveLength(2);
      expect(ids((await list('product=LIST_A&q=shop')).items)).toEqual([]);
    });
  });

  describe('paging', () => {
    beforeAll(async () => {
      // 1001 licences straight into the table: enough to see the default and the maximum page size.
      await t.sql(
        `INSERT INTO licenses (product_id, license_key, license_type, customer_name, expires_at, created_at)
         SELECT p.id, 'BK-' || lpad(n::text, 5, '0') || '-AAAAA-AAAAA-AAAAA', 'YEARLY', 'Bulk ' || n, now() + interval '1 year',
                timestamptz '2025-01-01T00:00:00Z' + n * interval '1 minute'
         FROM products p, generate_series(1, 1001) AS n WHERE p.code = 'BULK'`,
      );
    }, 60_000);

    it('defaults to 100 items, allows up to 1000, and counts all matches', async () => {
      const page = await list('product=BULK');
      expect(page.items).toHaveLength(100);
      expect(page.total).toBe(1001);
      expect(page.items[0].customer_name).toBe('Bulk 1001');
      expect((await list('product=BULK&limit=1000')).items).toHaveLength(1000);
    });

    it('limit and offset select a window; past the end is empty with the same total', async () => {
      const page = await list('product=BULK&limit=3&offset=2');
      expect(page.items.map((l) => l.customer_name)).toEqual(['Bulk 999', 'Bulk 998', 'Bulk 997']);
      expect(page.total).toBe(1001);
      const end = await list('product=BULK&limit=10&offset=1000');
      expect(end.items.map((l) => l.customer_name)).toEqual(['Bulk 1']);
      expect(await list('product=BULK&offset=5000')).toMatchObject({ items: [], total: 1001 });
    });
  });

  describe('query validation: 400 VALIDATION_ERROR naming the parameter', () => {
    it.each([
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['limit=1e2', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
      ['offset=99999999999', 'offset'],
      ['status=valid', 'status'],
      ['status=ACTIVE', 'status'],
      ['license_type=WEEKLY', 'license_type'],
      ['q=', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['q=%00', 'q'],
      ['q=a&q=b', 'q'],
      [`product=${'P'.repeat(33)}`, 'product'],
      ['colour=red', 'colour'],
      ['sort=id', 'sort'],
    ])('%s', async (query, field) => {
      const res = await t.admin.get(`${LICENSES}?${query}`).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(res.body)).toContain(field);
    });
  });
});
