import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const LICENSES = '/api/v1/admin/licenses';
const AUDIT = '/api/v1/admin/audit';
const b64 = (text: string) => Buffer.from(text, 'latin1').toString('base64url');

/** The target of `Link: <...>; rel="next"`, or undefined without one. */
function nextLink(headers: Record<string, string | undefined>): string | undefined {
  const link = headers.link;
  if (link === undefined) return undefined;
  const m = /^<([^<>]+)>; rel="next"$/.exec(link);
  if (!m) throw new Error(`malformed Link header: ${link}`);
  return m[1];
}

/**
 * Keyset pagination of the licence list and the audit log (issue 24): `after` takes the cursor of a page's
 * `Link: <...>; rel="next"` header; every full page followed by more matches carries one, the last page none.
 */
describe('keyset pagination: after and Link rel="next"', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    for (const [code, prefix] of [
      ['KEYSET', 'KS'],
      ['KEYSET_DEEP', 'KD'],
      ['KEYSET_DEL', 'KX'],
    ]) {
      await t.admin
        .post('/api/v1/admin/products')
        .send({ code, name: `Product ${code}`, key_prefix: prefix })
        .expect(201);
    }
    // 23 licences in groups of four sharing one created_at to the microsecond, two groups one microsecond apart.
    await t.sql(
      `INSERT INTO licenses (product_id, license_key, license_type, customer_name, expires_at, created_at)
       SELECT p.id, 'KS-' || lpad(n::text, 5, '0') || '-AAAAA-AAAAA-AAAAA', CASE WHEN n % 3 = 0 THEN 'PERPETUAL' ELSE 'YEARLY' END,
              CASE WHEN n % 2 = 0 THEN 'Even ' ELSE 'Odd ' END || n,
              CASE WHEN n % 3 = 0 THEN NULL ELSE now() + interval '1 year' END,
              timestamptz '2025-06-01T00:00:00.000001Z' + (n / 4) * interval '1 microsecond' * CASE WHEN n / 4 = 1 THEN 1 ELSE 1000001 END
       FROM products p, generate_series(1, 23) AS n WHERE p.code = 'KEYSET'`,
    );
    await t.sql(
      `INSERT INTO licenses (product_id, license_key, license_type, customer_name, created_at)
       SELECT p.id, 'KD-' || lpad(n::text, 5, '0') || '-AAAAA-AAAAA-AAAAA', 'PERPETUAL', 'Deep ' || n,
              timestamptz '2024-01-01T00:00:00Z' + (n / 2) * interval '1 second'
       FROM products p, generate_series(1, 2500) AS n WHERE p.code = 'KEYSET_DEEP'`,
    );
    // Audit entries of a licence id no test creates: three share one time, the others a microsecond apart.
    await t.sql(
      `INSERT INTO audit_entries (created_at, action, actor_type, actor, license_id, product_code, details)
       SELECT timestamptz '2002-03-01T00:00:00.000001Z' + (n / 3) * interval '1 microsecond',
              CASE WHEN n % 2 = 0 THEN 'license.updated' ELSE 'license.activated' END, 'system', 'system', 919191, 'KEYSET', '{}'
       FROM generate_series(1, 17) AS n`,
    );
  }, 60_000);
  afterAll(() => t.close());

  const get = (url: string) => t.admin.get(url).expect(200);

  /** Follows Link rel="next" from `url` to the last page: the ids in order, the pages and the totals each page sent. */
  async function walk(url: string) {
    const ids: number[] = [];
    const totals = new Set<string | undefined>();
    let pages = 0;
    for (let next: string | undefined = url; next !== undefined;) {
      const res = await get(next);
      ids.push(...(res.body as { id: number }[]).map((row) => row.id));
      totals.add(res.headers['x-total-count']);
      next = nextLink(res.headers);
      pages++;
      if (pages > 1000) throw new Error('Link loops');
    }
    return { ids, pages, totals: [...totals] };
  }

  const licenceIds = async (where: string, params: unknown[] = []) =>
    (
      await t.sql<{ id: number }>(
        `SELECT l.id FROM licenses l JOIN products p ON p.id = l.product_id WHERE ${where} ORDER BY l.created_at DESC, l.id DESC`,
        params,
      )
    ).map((r) => r.id);

  describe('licences', () => {
    it('walking the Links gives every row exactly once, newest first, ties (to the microsecond) split across pages by id', async () => {
      const expected = await licenceIds(`p.code = 'KEYSET'`);
      expect(expected).toHaveLength(23);
      const { ids, pages, totals } = await walk(`${LICENSES}?product=KEYSET&limit=3`);
      expect(ids).toEqual(expected);
      expect(pages).toBe(8);
      expect(totals).toEqual(['23']);
    });

    it('the Link keeps the path, the filters and the limit, adds after and drops offset; browsers may read it', async () => {
      const res = await get(`${LICENSES}?q=odd&offset=2&product=KEYSET&limit=4`);
      expect(res.headers['access-control-expose-headers']).toBe('X-Total-Count, X-Total-Count-Estimated, Link');
      const link = nextLink(res.headers) as string;
      const url = new URL(link, 'http://localhost');
      expect(url.pathname).toBe(LICENSES);
      expect([...url.searchParams.keys()]).toEqual(['q', 'product', 'limit', 'after']);
      expect(url.searchParams.get('q')).toBe('odd');
      expect(url.searchParams.get('limit')).toBe('4');
      expect(url.searchParams.get('after')).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      // The page after an offset page continues where it ended.
      const all = await licenceIds(`p.code = 'KEYSET' AND l.customer_name LIKE 'Odd %'`);
      expect((res.body as { id: number }[]).map((l) => l.id)).toEqual(all.slice(2, 6));
      expect((await get(link)).body.map((l: { id: number }) => l.id)).toEqual(all.slice(6, 10));
    });

    it('a page without parameters carries the Link too, with the default limit', async () => {
      const res = await get(LICENSES);
      expect(new URL(nextLink(res.headers) as string, 'http://localhost').search).toMatch(/^\?limit=100&after=[A-Za-z0-9_-]+$/);
    });

    it('the last page has no Link, also when it is exactly full (limit + 1 rows are read to know)', async () => {
      const exact = await get(`${LICENSES}?product=KEYSET&limit=23`);
      expect(exact.body).toHaveLength(23);
      expect(exact.headers.link).toBeUndefined();
      const one = await get(`${LICENSES}?product=KEYSET&limit=22`);
      const last = await get(nextLink(one.headers) as string);
      expect(last.body).toHaveLength(1);
      expect(last.headers.link).toBeUndefined();
      expect(last.headers['x-total-count']).toBe('23');
      expect((await get(`${LICENSES}?product=NO_SUCH&limit=5`)).headers.link).toBeUndefined();
    });

    it.each([
      ['license_type', 'product=KEYSET&license_type=PERPETUAL', `p.code = 'KEYSET' AND l.license_type = 'PERPETUAL'`],
      ['status', 'product=KEYSET&status=active', `p.code = 'KEYSET'`],
      ['q', 'product=KEYSET&q=even', `p.code = 'KEYSET' AND l.customer_name LIKE 'Even %'`],
    ])('with a filter (%s): exactly the matches, in order, X-Total-Count the matches on every page', async (_label, query, where) => {
      const expected = await licenceIds(where);
      const { ids, totals } = await walk(`${LICENSES}?${query}&limit=2`);
      expect(ids).toEqual(expected);
      expect(totals).toEqual([String(expected.length)]);
    });

    it('a row deleted between pages (the cursor row itself, and one further on) changes nothing else', async () => {
      await t.sql(
        `INSERT INTO licenses (product_id, license_key, license_type, customer_name, created_at)
         SELECT p.id, 'KX-' || lpad(n::text, 5, '0') || '-AAAAA-AAAAA-AAAAA', 'PERPETUAL', 'Deleted ' || n,
                timestamptz '2025-01-01T00:00:00Z' + (n / 2) * interval '1 millisecond'
         FROM products p, generate_series(1, 9) AS n WHERE p.code = 'KEYSET_DEL'`,
      );
      const all = await licenceIds(`p.code = 'KEYSET_DEL'`);
      const first = await get(`${LICENSES}?product=KEYSET_DEL&limit=4`);
      expect(first.body.map((l: { id: number }) => l.id)).toEqual(all.slice(0, 4));
      await t.sql(`DELETE FROM licenses WHERE id = ANY($1::int[])`, [[all[3], all[5]]]);
      const rest = await walk(nextLink(first.headers) as string);
      expect(rest.ids).toEqual([all[4], ...all.slice(6)]);
      expect(rest.totals).toEqual(['7']);
    });

    it('a deep page: the cursor after row 2000 gives what offset=2000 gives, and walking 2500 rows by 1000 takes 3 pages', async () => {
      const byOffset = await get(`${LICENSES}?product=KEYSET_DEEP&limit=100&offset=2000`);
      const marker = await get(`${LICENSES}?product=KEYSET_DEEP&limit=1&offset=1999`);
      const link = new URL(nextLink(marker.headers) as string, 'http://localhost');
      link.searchParams.set('limit', '100');
      const byCursor = await get(`${link.pathname}${link.search}`);
      expect(byCursor.body).toHaveLength(100);
      expect(byCursor.body).toEqual(byOffset.body);
      expect(byCursor.headers['x-total-count']).toBe(byOffset.headers['x-total-count']);
      const { ids, pages } = await walk(`${LICENSES}?product=KEYSET_DEEP&limit=1000`);
      expect(pages).toBe(3);
      expect(ids).toEqual(await licenceIds(`p.code = 'KEYSET_DEEP'`));
    });

    it('an id beyond the licence id type is no error (the comparison is bigint)', async () => {
      const res = await get(`${LICENSES}?after=${b64('9999-12-31T23:59:59.999999Z,9223372036854775807')}&product=KEYSET`);
      expect(res.body).toHaveLength(23);
      expect((await get(`${LICENSES}?after=${b64('0001-01-01T00:00:00.000000Z,1')}`)).body).toEqual([]);
    });
  });

  describe('audit log', () => {
    const auditIds = async (where: string) =>
      (await t.sql<{ id: string }>(`SELECT id FROM audit_entries WHERE ${where} ORDER BY created_at DESC, id DESC`)).map((r) =>
        Number(r.id),
      );

    it('walking the Links gives every entry exactly once, ties split by id', async () => {
      const expected = await auditIds('license_id = 919191');
      expect(expected).toHaveLength(17);
      const { ids, pages, totals } = await walk(`${AUDIT}?license_id=919191&limit=2`);
      expect(ids).toEqual(expected);
      expect(pages).toBe(9);
      expect(totals).toEqual(['17']);
    });

    it('with filters (action and a time range): the Link keeps them', async () => {
      const from = '2002-03-01T00:00:00.000002Z';
      const query = `license_id=919191&action=license.activated&from=${from}&to=2002-03-01T00:00:01Z&limit=3`;
      const res = await get(`${AUDIT}?${query}`);
      const link = new URL(nextLink(res.headers) as string, 'http://localhost');
      expect(link.pathname).toBe(AUDIT);
      expect(Object.fromEntries(link.searchParams)).toMatchObject({ action: 'license.activated', from, license_id: '919191' });
      const { ids } = await walk(`${AUDIT}?${query}`);
      expect(ids).toEqual(await auditIds(`license_id = 919191 AND action = 'license.activated' AND created_at >= '${from}'`));
      expect(ids.length).toBeGreaterThan(3);
    });

    it('a deep page of the whole log equals the offset page', async () => {
      const marker = await get(`${AUDIT}?license_id=919191&limit=1&offset=10`);
      const link = new URL(nextLink(marker.headers) as string, 'http://localhost');
      link.searchParams.set('limit', '4');
      const byCursor = await get(`${link.pathname}${link.search}`);
      expect(byCursor.body).toEqual((await get(`${AUDIT}?license_id=919191&limit=4&offset=11`)).body);
    });
  });

  describe('hostile cursors: 400 VALIDATION_ERROR naming the parameter, never a 500', () => {
    const ok = '2025-06-01T00:00:00.000001Z,5';
    it.each([
      ['not base64url', 'after=%2A%2A%2A', 'after'],
      ['standard base64 with padding', `after=${Buffer.from(ok).toString('base64')}%3D`, 'after'],
      ['base64 that decodes to nothing usable', 'after=AAAA', 'after'],
      ['another structure (JSON)', `after=${b64(JSON.stringify({ created_at: '2025-06-01T00:00:00Z', id: 5 }))}`, 'after'],
      ['no id', `after=${b64('2025-06-01T00:00:00.000001Z')}`, 'after'],
      ['an id that is not an integer', `after=${b64('2025-06-01T00:00:00.000001Z,five')}`, 'after'],
      ['a negative id', `after=${b64('2025-06-01T00:00:00.000001Z,-5')}`, 'after'],
      ['an id beyond bigint', `after=${b64('2025-06-01T00:00:00.000001Z,99999999999999999999')}`, 'after'],
      ['a timestamp that is not one', `after=${b64('yesterday,5')}`, 'after'],
      ['February 30', `after=${b64('2025-02-30T00:00:00.000000Z,5')}`, 'after'],
      ['year 0', `after=${b64('0000-01-01T00:00:00.000000Z,5')}`, 'after'],
      ['a five-digit year', `after=${b64('20250-01-01T00:00:00.000000Z,5')}`, 'after'],
      ['over-long', `after=${'A'.repeat(65)}`, 'after'],
      ['very long', `after=${'A'.repeat(5000)}`, 'after'],
      ['empty', 'after=', 'after'],
      ['repeated', `after=${b64(ok)}&after=${b64(ok)}`, 'after'],
      ['with offset', `after=${b64(ok)}&offset=10`, 'after'],
      ['with offset=0', `after=${b64(ok)}&offset=0`, 'after'],
    ])('%s', async (_label, query, field) => {
      for (const list of [LICENSES, AUDIT]) {
        const res = await t.admin.get(`${list}?${query}`).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(fieldsOf(res.body)).toContain(field);
      }
    });

    it('the exports take no after (they stream every match)', async () => {
      const res = await t.admin.get(`${LICENSES}/export?after=${b64(ok)}`).expect(400);
      expect(fieldsOf(res.body)).toContain('after');
    });
  });
});
