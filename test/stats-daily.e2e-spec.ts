import { asBearer, createLicense, fingerprint } from './support/factories';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const DAILY = '/api/v1/admin/stats/daily';
const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const zero = { activations: 0, refusals: 0, deactivations: 0, trials: 0, new_licences: 0 };

/** GET /stats/daily (docs/licences.md, Daily statistics): one row per UTC day of a product's events. */
describe('admin daily statistics API', () => {
  let t: TestApp;
  const today = dayOf(Date.now());
  beforeAll(async () => {
    t = await createTestApp();
    for (const [code, prefix] of [
      ['DAILY_A', 'DA'],
      ['DAILY_B', 'DB'],
    ]) {
      await t.admin
        .post('/api/v1/admin/products')
        .send({ code, name: code, key_prefix: prefix, trial: { days: 7 } })
        .expect(201);
    }
  }, 60_000);
  afterAll(() => t.close());

  type Row = typeof zero & { day: string };
  const rowOf = async (query: string, day = today) => {
    const rows = (await t.admin.get(`${DAILY}?${query}`).expect(200)).body as Row[];
    return rows.find((r) => r.day === day);
  };
  const activate = (key: string, seed: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: key, machine_fingerprint: fingerprint(seed), hostname: seed });

  it('counts new seats, refusals, deactivations, trials and new licences of one product per UTC day; re-activations do not count', async () => {
    const one = await createLicense(t, { product_code: 'DAILY_A', limits: { max_installations: 1 } });
    await createLicense(t, { product_code: 'DAILY_A' });
    await createLicense(t, { product_code: 'DAILY_B' });
    await activate(one.license_key, 'daily-1').expect(200);
    await activate(one.license_key, 'daily-1').expect(200); // the same machine again: a re-activation
    expect((await activate(one.license_key, 'daily-2').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
    await t
      .http()
      .post('/api/v1/deactivate')
      .send({ license_key: one.license_key, machine_fingerprint: fingerprint('daily-1') })
      .expect(200);
    await t
      .http()
      .post('/api/v1/trials')
      .send({ product: 'DAILY_A', machine_fingerprint: fingerprint('daily-trial') })
      .expect(201);

    expect(await rowOf('product=DAILY_A')).toEqual({
      day: today,
      activations: 1,
      refusals: 1,
      deactivations: 1,
      trials: 1,
      new_licences: 2,
    });
    expect(await rowOf('product=daily_b')).toEqual({ day: today, ...zero, new_licences: 1 });
  });

  it('answers every day from `from` to `to`, both included, oldest first, zeros included; by default the last 30 days', async () => {
    const from = dayOf(Date.now() - 6 * DAY_MS);
    const rows = (await t.admin.get(`${DAILY}?product=DAILY_A&from=${from}&to=${today}`).expect(200)).body as { day: string }[];
    expect(rows.map((r) => r.day)).toEqual(Array.from({ length: 7 }, (_, i) => dayOf(Date.now() - (6 - i) * DAY_MS)));
    expect(rows[0]).toEqual({ day: from, ...zero });
    const byDefault = (await t.admin.get(`${DAILY}?product=DAILY_A`).expect(200)).body as { day: string }[];
    expect(byDefault).toHaveLength(30);
    expect(byDefault[29].day).toBe(today);
    expect((await t.admin.get(`${DAILY}?product=DAILY_A&from=2026-01-01&to=2026-01-01`).expect(200)).body).toEqual([
      { day: '2026-01-01', ...zero },
    ]);
  });

  it('without a product, adds up every product the credential sees; a limited token sees only its own', async () => {
    const all = (await rowOf(''))!;
    const a = (await rowOf('product=DAILY_A'))!;
    const b = (await rowOf('product=DAILY_B'))!;
    expect(all).toMatchObject({ new_licences: expect.any(Number) });
    expect(all.new_licences).toBeGreaterThanOrEqual(a.new_licences + b.new_licences);

    const issued = await t.admin
      .post('/api/v1/admin/tokens')
      .send({ name: 'daily-b', scopes: ['stats:read'], products: ['DAILY_B'] })
      .expect(201);
    const limited = asBearer(t, issued.body.token as string);
    const own = (await limited.get(`${DAILY}`).expect(200)).body as { day: string }[];
    expect(own.find((r) => r.day === today)).toEqual(b);
    // Another product's numbers are not disclosed, nor whether it exists.
    const other = await limited.get(`${DAILY}?product=DAILY_A`).expect(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
    const unknown = await limited.get(`${DAILY}?product=NO_SUCH`).expect(404);
    expect(unknown.body).toEqual(other.body);
  });

  it.each([
    ['from=2026-13-01', ['from']],
    ['from=2026-02-30', ['from']],
    ['to=yesterday', ['to']],
    ['from=2026-1-1', ['from']],
    ['from=2026-05-02&to=2026-05-01', ['from']],
    ['from=2025-01-01&to=2026-01-02', ['from']],
    ['product=' + 'X'.repeat(33), ['product']],
    ['unknown=1', ['unknown']],
  ])('%s: 400 VALIDATION_ERROR naming the field', async (query, fields) => {
    const res = await t.admin.get(`${DAILY}?${query}`).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res.body)).toEqual(fields);
  });

  it('404 for an unknown product; 401 without a credential; 403 for a token without stats:read', async () => {
    expect((await t.admin.get(`${DAILY}?product=NO_SUCH`).expect(404)).body.error.code).toBe('NOT_FOUND');
    expect((await t.http().get(DAILY).expect(401)).body.error.code).toBe('UNAUTHORIZED');
    const issued = await t.admin
      .post('/api/v1/admin/tokens')
      .send({ name: 'daily-no-scope', scopes: ['licenses:read'] })
      .expect(201);
    expect(
      (
        await asBearer(t, issued.body.token as string)
          .get(DAILY)
          .expect(403)
      ).body.error.code,
    ).toBe('FORBIDDEN');
  });
});
