import type { AddressInfo } from 'node:net';
import { ErrorCode } from '../../src/common/errors/error-codes';
import { createLicense, fingerprint } from '../support/factories';
import { createTestApp, TEST_API_KEY, TestApp } from '../support/test-app';
import { contractProblems, errorCode, errorFields, leaks } from './support/contract';
import { changes, DbSnapshot, snapshot } from './support/db-snapshot';
import { jsonRequest, RawResponse, REQUEST_TIMEOUT_MS, send } from './support/raw-http';
import { report, tally } from './support/report';
import { buildSweepCases, HostileCase, SWEEP_SEED, SweepFixtures } from './support/sweep-cases';

/** A refused, well-formed activation writes exactly one `license.activation_denied` entry and nothing else (docs/licences.md, Audit log). */
const ACTIVATION_DENIALS = new Set<string>([
  ErrorCode.INVALID_KEY,
  ErrorCode.PRODUCT_MISMATCH,
  ErrorCode.KEY_REVOKED,
  ErrorCode.KEY_SUSPENDED,
  ErrorCode.KEY_EXPIRED,
  ErrorCode.ALREADY_ACTIVATED,
]);

/** Everything wrong with one answer, or [] (docs/errors.md, Body; no leak, the expected status/code/field, the database as it should be). */
function problemsOf(c: HostileCase, res: RawResponse, before: DbSnapshot, after: DbSnapshot): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`status ${res.status}`);
  if (c.expect.status !== undefined ? res.status !== c.expect.status : res.status < 400 || res.status >= 500) {
    problems.push(`status ${res.status}, expected ${c.expect.status ?? '4xx'}`);
  }
  if (c.expect.code && errorCode(res) !== c.expect.code) problems.push(`code ${errorCode(res)}, expected ${c.expect.code}`);
  if (c.expect.field !== undefined && !errorFields(res).some((f) => f.startsWith(c.expect.field as string))) {
    problems.push(`fields ${JSON.stringify(errorFields(res))} do not name ${JSON.stringify(c.expect.field)}`);
  }
  if (res.status >= 400) problems.push(...contractProblems(res));
  problems.push(...leaks(res, c.sent));
  const deniedActivation =
    c.request.method === 'POST' && c.request.path === '/api/v1/activate' && ACTIVATION_DENIALS.has(errorCode(res) ?? '');
  const changed = changes(before, after);
  const allowed = deniedActivation ? ['denied +1'] : [];
  if (changed.join() !== allowed.join())
    problems.push(`database: ${changed.join(', ') || 'unchanged'}, expected ${allowed.join(', ') || 'unchanged'}`);
  return problems.length ? [`${c.group} | ${c.name}: ${problems.join('; ')} | body ${res.body.slice(0, 160)}`] : [];
}

describe('hostile input sweep (every JSON route)', () => {
  let t: TestApp;
  let port: number;
  let fixtures: SweepFixtures;

  beforeAll(async () => {
    // Validation never writes last_seen_at during the sweep: a rejected request must change nothing.
    t = await createTestApp({ lastSeenIntervalSeconds: 86_400 });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    const [product] = await t.sql<{ id: number }>("SELECT id FROM products WHERE code <> 'POS_RETAIL' ORDER BY id LIMIT 1");
    const retired = await t.admin
      .post('/api/v1/admin/products')
      .send({ code: 'RETIRED_APP', name: 'Retired', key_prefix: 'RET', active: false });
    expect(retired.status).toBe(201);
    const revoked = await createLicense(t);
    expect((await t.admin.post(`/api/v1/admin/licenses/${revoked.id}/revoke`).send({ reason: 'sweep fixture' })).status).toBe(200);
    const idle = await createLicense(t);
    fixtures = {
      apiKey: TEST_API_KEY,
      productId: product.id,
      inactiveProductCode: 'RETIRED_APP',
      revokedLicenseId: revoked.id,
      idleLicenseId: idle.id,
    };
  });

  afterAll(() => t?.close());

  it('answers every generated hostile request with a documented 4xx error (or its documented success), never a 5xx or a hang, and changes nothing', async () => {
    const cases = buildSweepCases(fixtures);
    const failures: string[] = [];
    const statuses: number[] = [];
    let slowest = { ms: 0, name: '' };
    let current = await snapshot(t.sql);
    const { rows: rowsBefore, denied: deniedBefore } = current;
    for (const c of cases) {
      let res: RawResponse;
      try {
        res = await send(port, c.request, REQUEST_TIMEOUT_MS);
      } catch (err) {
        failures.push(`${c.group} | ${c.name}: ${(err as Error).message}`);
        current = await snapshot(t.sql);
        continue;
      }
      const after = await snapshot(t.sql);
      failures.push(...problemsOf(c, res, current, after));
      current = after;
      statuses.push(res.status);
      if (res.ms > slowest.ms) slowest = { ms: res.ms, name: c.name };
    }
    report('input-sweep', {
      seed: SWEEP_SEED,
      cases: cases.length,
      by_group: tally(cases, (c) => c.group),
      by_status: tally(statuses, String),
      status_5xx: statuses.filter((s) => s >= 500).length,
      hangs: failures.filter((f) => f.includes('no complete response')).length,
      slowest_ms: slowest.ms,
      slowest_case: slowest.name,
      database_checks: cases.length,
      activation_denials_written: current.denied - deniedBefore,
      other_rows_written: current.rows - rowsBefore - (current.denied - deniedBefore),
      violations: failures.length,
    });
    expect(cases.length).toBeGreaterThanOrEqual(500);
    expect(failures).toEqual([]);
  });

  describe('well-formed hostile text is stored and returned exactly', () => {
    const WEIRD = [
      '🚀 Rocket d.o.o. 🧑‍💻',
      '\u202Eexe.tnemyap\u202C',
      'مرحبا بالعالم',
      'שלום עולם',
      'e\u0301\u0301\u0301 combining',
      'zero\u200Bwidth\u200Djoiner',
      '\uFEFFleading BOM',
      '𝕳𝖊𝖑𝖑𝖔 𝖂𝖔𝖗𝖑𝖉',
      'Ω≈ç√∫ ſ ß İ',
      "Robert'); DROP TABLE licenses;--",
      '{{constructor.constructor("return process")()}}',
      '${7*7} #{7*7} <%= 7*7 %>',
      '<script>alert(1)</script>',
      '100% _literal_ \\ back\\slash',
      'x'.repeat(200),
      '  padded  ',
    ];

    it('licence text fields round-trip; search treats the text literally', async () => {
      const results: string[] = [];
      for (const text of WEIRD) {
        const created = await t.admin
          .post('/api/v1/admin/licenses')
          .send({ product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: text, notes: text });
        expect(created.status).toBe(201);
        const got = await t.admin.get(`/api/v1/admin/licenses/${created.body.id}`);
        expect({ name: got.body.customer_name, notes: got.body.notes }).toEqual({ name: text, notes: text });
        const found = await t.admin.get(`/api/v1/admin/licenses?q=${encodeURIComponent(text)}&limit=1000`);
        expect(found.status).toBe(200);
        expect(found.body.map((l: { id: number }) => l.id)).toContain(created.body.id);
        // Literal: every hit really contains the text (no % or _ wildcard, no injected condition).
        for (const hit of found.body as { customer_name: string; customer_email: string | null; license_key: string }[]) {
          const haystack = `${hit.customer_name}${hit.customer_email ?? ''}${hit.license_key}`.toLowerCase();
          expect(haystack).toContain(text.toLowerCase());
        }
        results.push(text);
      }
      // Raw JSON escapes of a valid surrogate pair are one emoji, not two broken halves.
      const pair = await t
        .http()
        .post('/api/v1/admin/licenses')
        .set('X-API-Key', TEST_API_KEY)
        .set('Content-Type', 'application/json')
        .send('{"product_code":"POS_RETAIL","license_type":"YEARLY","customer_name":"\\ud83d\\ude80 pair"}');
      expect(pair.status).toBe(201);
      expect((await t.admin.get(`/api/v1/admin/licenses/${pair.body.id}`)).body.customer_name).toBe('🚀 pair');
      report('input-sweep-accepted', { licence_texts_round_tripped: results.length + 1 });
    });

    it('activation hostnames round-trip, and unknown client fields are ignored', async () => {
      const licence = await createLicense(t, { limits: { max_installations: 100 } });
      for (const [i, hostname] of WEIRD.entries()) {
        const res = await send(
          port,
          jsonRequest('POST', '/api/v1/activate', {
            license_key: licence.license_key,
            machine_fingerprint: fingerprint(`weird-${i}`),
            hostname,
            os: hostname.slice(0, 100),
            future_field: { nested: [1, 2, 3] },
          }),
        );
        expect(res.status).toBe(200);
        expect((res.json as { license: { machine_fingerprint: string } }).license.machine_fingerprint).toBe(fingerprint(`weird-${i}`));
      }
      const seats = await t.admin.get(`/api/v1/admin/licenses/${licence.id}/activations`);
      expect(new Set(seats.body.map((s: { hostname: string }) => s.hostname))).toEqual(new Set(WEIRD));
      const validated = await send(
        port,
        jsonRequest('POST', '/api/v1/validate', {
          license_key: licence.license_key.toLowerCase(),
          machine_fingerprint: fingerprint('weird-0').toUpperCase().replace('SHA256:', 'sha256:'),
          constructor: 'x',
          extra: [],
        }),
      );
      expect(validated.status).toBe(200);
      expect(validated.json).toMatchObject({ valid: true, code: null });
      report('input-sweep-hostnames', { hostnames_round_tripped: WEIRD.length });
    });
  });
});
