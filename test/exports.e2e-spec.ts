import { parse } from 'csv-parse/sync';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { poolOf } from '../src/database/row-stream';
import { createLicense, insertSeat } from './support/factories';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const LICENSES = '/api/v1/admin/licenses';
const AUDIT = '/api/v1/admin/audit';

/** Values that break naive CSV writers or run as spreadsheet formulas. */
const TRICKY = [
  'Quote "Kod Mike" d.o.o.',
  'Comma, Semicolon; and "both", here',
  'Line one\nline two\r\nline three',
  'Emoji 🚀 and ünïcödé Ђурђевић',
  '=HYPERLINK("http://evil.example","x")',
  '+381 11 123',
  '-2+3',
  '@SUM(A1:A2)',
  '\tTabbed',
  '\rCarriage',
];

/** RFC 4180, strictly: CRLF records, quotes only where RFC 4180 allows them, the same column count everywhere. */
const parseCsv = (text: string) =>
  parse<Record<string, string>>(text, {
    columns: true,
    record_delimiter: '\r\n',
    relax_quotes: false,
    relax_column_count: false,
    skip_empty_lines: false,
  });

describe('exports (docs/admin-api.md, Exports)', () => {
  let t: TestApp;
  const tricky: number[] = [];
  beforeAll(async () => {
    t = await createTestApp();
    for (const [i, name] of TRICKY.entries()) {
      const { id } = await createLicense(t, {
        product_code: i % 2 ? 'ERP_SUITE' : 'POS_RETAIL',
        license_type: i % 3 ? 'YEARLY' : 'MONTHLY',
        customer_name: `Tricky ${i}`,
      });
      // Straight into the database: the export must survive whatever a column can hold.
      await t.sql('UPDATE licenses SET customer_name = $2::text, notes = $2::text WHERE id = $1', [id, name]);
      tricky.push(id);
    }
    await t.admin.post(`${LICENSES}/${tricky[0]}/revoke`).send({ reason: '=cmd|"/c calc"!A1' }).expect(200);
    await insertSeat(t, tricky[1]);
  }, 60_000);
  afterAll(() => t.close());

  const list = async (query: string) => {
    const res = await t.admin.get(`${LICENSES}?limit=1000${query ? `&${query}` : ''}`).expect(200);
    return { items: res.body as { id: number }[], total: Number(res.headers['x-total-count']) };
  };

  describe('licences', () => {
    it('CSV: attachment, RFC 4180 with a header row, every tricky value back exactly (formulas behind an apostrophe)', async () => {
      const res = await t.admin.get(`${LICENSES}/export?format=csv`).expect(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="licenses-\d{8}T\d{6}Z\.csv"$/);
      expect(res.text.startsWith('id,product_code,license_key,license_type,status,customer_name,')).toBe(true);
      expect(res.text.endsWith('\r\n')).toBe(true);
      const rows = parseCsv(res.text);
      const { items, total } = await list('');
      expect(rows).toHaveLength(total);
      expect(rows.map((r) => Number(r.id))).toEqual(items.map((l) => l.id));
      for (const [i, name] of TRICKY.entries()) {
        const row = rows.find((r) => Number(r.id) === tricky[i])!;
        const expected = /^[=+\-@\t\r]/.test(name) ? `'${name}` : name;
        expect([row.customer_name, row.notes]).toEqual([expected, expected]);
      }
      const revoked = rows.find((r) => Number(r.id) === tricky[0])!;
      expect(revoked).toMatchObject({ status: 'revoked', revoke_reason: `'=cmd|"/c calc"!A1`, active: 'true' });
      expect(revoked.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(JSON.parse(revoked.features)).toEqual(expect.any(Array));
      expect(JSON.parse(revoked.limit_overrides)).toEqual({});
    });

    it('NDJSON: one object per line, the same licences as the list, values round-trip unchanged', async () => {
      const res = await t.admin.get(`${LICENSES}/export?format=ndjson`).expect(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="licenses-\d{8}T\d{6}Z\.ndjson"$/);
      const lines = res.text.split('\n');
      expect(lines.pop()).toBe('');
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const { items } = await list('');
      expect(records.map((r) => r.id)).toEqual(items.map((l) => l.id));
      for (const [i, name] of TRICKY.entries()) {
        const record = records.find((r) => r.id === tricky[i])!;
        const details = (await t.admin.get(`${LICENSES}/${tricky[i]}`).expect(200)).body as Record<string, unknown>;
        expect(record).toEqual({
          id: details.id,
          product_code: details.product_code,
          license_key: details.license_key,
          license_type: details.license_type,
          status: details.status,
          customer_name: name,
          customer_email: details.customer_email,
          customer_pib: details.customer_pib,
          features: details.features,
          limit_overrides: details.limit_overrides,
          grace_days: details.grace_days,
          expires_at: details.expires_at,
          active: details.active,
          revoked_at: details.revoked_at,
          revoke_reason: details.revoke_reason,
          notes: name,
          created_at: details.created_at,
          updated_at: details.updated_at,
          store_name: null,
          store_customer_id: null,
          store_subscription_id: null,
          store_order_id: null,
        });
      }
    });

    it.each([
      'product=ERP_SUITE',
      'status=revoked',
      'status=active&license_type=MONTHLY',
      'license_type=YEARLY&product=POS_RETAIL',
      'q=tricky',
      `q=${encodeURIComponent('"kod mike"')}`,
      'q=nobody-has-this',
    ])('filters (%s): the same rows, in the same order, as X-Total-Count of the list', async (query) => {
      const { items, total } = await list(query);
      const csv = parseCsv((await t.admin.get(`${LICENSES}/export?format=csv&${query}`).expect(200)).text);
      expect(csv).toHaveLength(total);
      expect(csv.map((r) => Number(r.id))).toEqual(items.map((l) => l.id));
    });

    it('an empty export is the header row alone', async () => {
      const res = await t.admin.get(`${LICENSES}/export?q=nobody-has-this`).expect(200);
      expect(res.text).toMatch(/^id,product_code,[a-z_,]+\r\n$/);
    });

    it.each([
      ['an unknown format', 'format=xml', 'format'],
      ['paging (every match is exported)', 'limit=10', 'limit'],
      ['a bad filter', 'status=sleeping', 'status'],
    ])('400 VALIDATION_ERROR with the error body for %s', async (_label, query, field) => {
      const res = await t.admin.get(`${LICENSES}/export?${query}`).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['content-disposition']).toBeUndefined();
      expect(fieldsOf(res.body)).toEqual([field]);
    });

    it('401 without a credential, 503 with the error body when the database is down before the first byte', async () => {
      await t.http().get(`${LICENSES}/export`).expect(401);
      await t.cutDatabase();
      try {
        const res = await t.admin.get(`${LICENSES}/export`);
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(res.headers['content-disposition']).toBeUndefined();
      } finally {
        await t.restoreDatabase();
      }
    });
  });

  describe('audit', () => {
    it.each(['', 'action=license.revoked', `license_id=${0}`, 'actor_type=admin_api&from=2000-01-01T00:00:00Z', 'to=2000-01-01T00:00:00Z'])(
      'filters (%s): CSV and NDJSON have the rows of the list, newest first',
      async (rawQuery) => {
        const query = rawQuery.replace('license_id=0', `license_id=${tricky[1]}`);
        const listed = await t.admin.get(`${AUDIT}?limit=1000&${query}`).expect(200);
        const items = listed.body as { id: number; details: unknown; action: string }[];
        expect(items.length).toBe(Number(listed.headers['x-total-count']));
        const csv = parseCsv((await t.admin.get(`${AUDIT}/export?format=csv&${query}`).expect(200)).text);
        expect(csv.map((r) => Number(r.id))).toEqual(items.map((e) => e.id));
        const ndjson = (await t.admin.get(`${AUDIT}/export?format=ndjson&${query}`).expect(200)).text;
        const records = ndjson
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { id: number; details: unknown; created_at: string; action: string });
        expect(records).toEqual(items);
        for (const [i, row] of csv.entries()) expect(JSON.parse(row.details.replace(/^'/, ''))).toEqual(items[i].details);
      },
    );

    it('the revoke reason in details stays a JSON cell (a formula cannot start it)', async () => {
      const res = await t.admin.get(`${AUDIT}/export?action=license.revoked&license_id=${tricky[0]}`).expect(200);
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="audit-\d{8}T\d{6}Z\.csv"$/);
      const [row] = parseCsv(res.text);
      expect(JSON.parse(row.details)).toEqual({ reason: '=cmd|"/c calc"!A1' });
    });

    it('400 with the error body when from is after to', async () => {
      const res = await t.admin.get(`${AUDIT}/export?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`).expect(400);
      expect(fieldsOf(res.body)).toEqual(['from']);
    });
  });

  describe('streaming', () => {
    beforeAll(async () => {
      const [product] = await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'FISCAL_BRIDGE'`);
      await t.sql(
        `INSERT INTO licenses (product_id, license_key, license_type, customer_name, limits, features, created_at, updated_at)
         SELECT $1, 'FIS-' || lpad(to_hex(g), 5, '0') || '-STRM0-STRM0-STRM0', 'YEARLY', 'Streamed ' || g, '{}', '[]',
                now() - g * interval '1 second', now()
         FROM generate_series(1, 30000) g`,
        [product.id],
      );
    }, 60_000);

    it('exports every row of a large result', async () => {
      const res = await t.admin.get(`${LICENSES}/export?format=ndjson&product=FISCAL_BRIDGE`).expect(200);
      expect(res.text.split('\n').filter(Boolean)).toHaveLength(30000);
    }, 60_000);

    it('a client that hangs up mid-export gives its database connection back and ends the query', async () => {
      const pool = poolOf(t.dataSource);
      const server = t.app.getHttpServer() as Server;
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const target = (server.address() as AddressInfo).port;
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: target, path: `${LICENSES}/export?format=csv`, headers: { 'X-API-Key': t.config.apiKeys[0] } },
          (res) => {
            expect(res.statusCode).toBe(200);
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
        req.end();
      });
      const deadline = Date.now() + 10_000;
      for (;;) {
        const running = await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
             AND query LIKE '%ORDER BY l.created_at DESC, l.id DESC' AND state <> 'idle'`,
        );
        if (running[0].n === 0 && pool.totalCount - pool.idleCount === 0) break;
        if (Date.now() > deadline)
          throw new Error(`export still holds a connection: ${running[0].n} running, ${pool.totalCount - pool.idleCount} busy`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // The pool still works.
      await t.admin.get(`${LICENSES}?limit=1`).expect(200);
    }, 60_000);
  });
});
