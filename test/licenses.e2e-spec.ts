import { LICENSE_KEY_PATTERN } from '../src/licenses/license-key';
import { addUtcMonths } from '../src/licenses/license-expiry';
import { LicenseCreation } from '../src/licenses/license-creation';
import { createLicense, fingerprint, insertSeat, licenseInput, requestAuditCount } from './support/factories';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const LICENSES = '/api/v1/admin/licenses';
const DAY_MS = 86_400_000;
const future = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();

describe('admin licences API: create and read', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const auditCount = () => requestAuditCount(t);

  describe('X-API-Key', () => {
    it.each([
      ['get', LICENSES],
      ['post', LICENSES],
      ['get', `${LICENSES}/1`],
      ['put', `${LICENSES}/1`],
      ['post', `${LICENSES}/1/revoke`],
      ['post', `${LICENSES}/1/release`],
      ['get', `${LICENSES}/1/activations`],
    ] as const)('%s %s answers 401 UNAUTHORIZED without the key', async (method, url) => {
      const res = await t.http()[method](url).send({}).expect(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    });
  });

  describe('POST /licenses', () => {
    it('creates a licence: 201 {id, license_key, message}, key with the product prefix, one license.created audit entry', async () => {
      const before = await auditCount();
      const res = await t.admin
        .post(LICENSES)
        .send({ product_code: 'POS_RETAIL', license_type: 'MONTHLY', customer_name: 'Kod Mike' })
        .expect(201);
      expect(res.body).toEqual({ id: expect.any(Number), license_key: expect.stringMatching(/^POS-/), message: expect.any(String) });
      expect(res.body.license_key).toMatch(LICENSE_KEY_PATTERN);
      expect(await auditCount()).toBe(before + 1);
      const [entry] = await t.sql('SELECT * FROM audit_entries WHERE license_id = $1', [res.body.id]);
      expect(entry).toMatchObject({
        action: 'license.created',
        actor_type: 'admin_api',
        actor: expect.stringMatching(/^key:[0-9a-f]{8}$/),
        product_code: 'POS_RETAIL',
      });
      expect(entry.details).toMatchObject({ license_type: 'MONTHLY', customer_name: 'Kod Mike', grace_days: 7 });
      expect(JSON.stringify(entry.details)).not.toContain(res.body.license_key);
    });

    it('uses the key prefix of the chosen product', async () => {
      expect((await createLicense(t, { product_code: 'ERP_SUITE' })).license_key).toMatch(/^ERP-/);
      expect((await createLicense(t, { product_code: 'FISCAL_BRIDGE' })).license_key).toMatch(/^FB-/);
    });

    it('applies the defaults: all product features, grace 7, product default limits, no notes, e-mail or PIB', async () => {
      const { id } = await createLicense(t, { product_code: 'POS_RETAIL' });
      const res = await t.admin.get(`${LICENSES}/${id}`).expect(200);
      expect(res.body).toMatchObject({
        features: ['FISCAL_PRINTING', 'MULTI_OPERATOR', 'INVENTORY', 'REPORTS'],
        grace_days: 7,
        limits: { max_installations: 1, max_operators: 5 },
        limit_overrides: {},
        notes: null,
        customer_email: null,
        customer_pib: null,
        active: true,
        revoked: false,
        status: 'active',
      });
    });

    it.each([
      ['TRIAL', (c: Date) => new Date(c.getTime() + 14 * DAY_MS)],
      ['MONTHLY', (c: Date) => addUtcMonths(c, 1)],
      ['QUARTERLY', (c: Date) => addUtcMonths(c, 3)],
      ['YEARLY', (c: Date) => addUtcMonths(c, 12)],
      ['PERPETUAL', () => null],
    ] as const)('computes expires_at of a %s licence from its creation time', async (type, expected) => {
      const { id } = await createLicense(t, { license_type: type });
      const res = await t.admin.get(`${LICENSES}/${id}`).expect(200);
      expect(res.body.expires_at).toBe(expected(new Date(res.body.created_at))?.toISOString() ?? null);
      expect(res.body.grace_ends_at).toBe(
        res.body.expires_at ? new Date(Date.parse(res.body.expires_at) + 7 * DAY_MS).toISOString() : null,
      );
    });

    it('stores only the licence own limits and merges them over the product defaults on read', async () => {
      const { id } = await createLicense(t, { limits: { max_installations: 3, custom_limit: 0 } });
      const res = await t.admin.get(`${LICENSES}/${id}`).expect(200);
      expect(res.body.limits).toEqual({ max_installations: 3, max_operators: 5, custom_limit: 0 });
      expect(res.body.limit_overrides).toEqual({ max_installations: 3, custom_limit: 0 });
      const [row] = await t.sql('SELECT limits FROM licenses WHERE id = $1', [id]);
      expect(row.limits).toEqual({ max_installations: 3, custom_limit: 0 });
    });

    it('retries with a new key when the generated one is already taken', async () => {
      const existing = await createLicense(t);
      const service = t.app.get(LicenseCreation);
      const spy = jest
        .spyOn(service as unknown as { newLicenseKey: (p: string) => string }, 'newLicenseKey')
        .mockReturnValueOnce(existing.license_key);
      try {
        const created = await createLicense(t);
        expect(created.license_key).not.toBe(existing.license_key);
        expect(spy).toHaveBeenCalledTimes(2);
        expect(await t.sql("SELECT id FROM audit_entries WHERE action = 'license.created' AND license_id = $1", [created.id])).toHaveLength(
          1,
        );
      } finally {
        spy.mockRestore();
      }
    });

    describe('accepts every valid value', () => {
      it.each([
        ['a 1-character customer_name', { customer_name: 'X' }],
        ['a 200-character customer_name', { customer_name: 'N'.repeat(200) }],
        ['a non-ASCII customer_name', { customer_name: 'Đurđević & sinovi — Ćuprija' }],
        ['a customer_email', { customer_email: 'office@example.rs' }],
        ['a long customer_email', { customer_email: `a@${`${'b'.repeat(60)}.`.repeat(4)}rs` }],
        ['customer_email null', { customer_email: null }],
        ['a valid PIB', { customer_pib: '101134702' }],
        ['customer_pib null', { customer_pib: null }],
        ['limits at the bounds', { limits: { max_installations: 0, seats_x: 2147483647 } }],
        ['empty limits', { limits: {} }],
        ['a subset of the features', { features: ['REPORTS', 'INVENTORY'] }],
        ['no features', { features: [] }],
        ['grace_days 0', { grace_days: 0 }],
        ['grace_days 365', { grace_days: 365 }],
        ['2000-character notes', { notes: 'n'.repeat(2000) }],
        ['empty notes', { notes: '' }],
        ['expires_at in the future', { expires_at: future(3) }],
        ['expires_at with a zone offset', { expires_at: '2099-06-01T12:00:00+02:00' }],
      ] as [string, Record<string, unknown>][])('%s', async (_label, overrides) => {
        const res = await t.admin
          .post(LICENSES)
          .send(licenseInput(overrides as never))
          .expect(201);
        const details = (await t.admin.get(`${LICENSES}/${res.body.id}`).expect(200)).body;
        for (const [field, value] of Object.entries(overrides)) {
          if (field === 'limits') expect(details.limit_overrides).toEqual(value);
          else if (field === 'expires_at') expect(details.expires_at).toBe(new Date(value as string).toISOString());
          else expect(details[field]).toEqual(value);
        }
      });
    });

    describe('rejects every invalid value with 400 VALIDATION_ERROR naming the field, and writes nothing', () => {
      it.each([
        ['product_code missing', { product_code: undefined }, 'product_code'],
        ['an unknown product_code', { product_code: 'NO_SUCH' }, 'product_code'],
        ['a numeric product_code', { product_code: 7 }, 'product_code'],
        ['license_type missing', { license_type: undefined }, 'license_type'],
        ['an unknown license_type', { license_type: 'WEEKLY' }, 'license_type'],
        ['a lower-case license_type', { license_type: 'monthly' }, 'license_type'],
        ['customer_name missing', { customer_name: undefined }, 'customer_name'],
        ['an empty customer_name', { customer_name: '' }, 'customer_name'],
        ['a blank customer_name', { customer_name: '   ' }, 'customer_name'],
        ['a 201-character customer_name', { customer_name: 'N'.repeat(201) }, 'customer_name'],
        ['a customer_name with NUL', { customer_name: 'a\u0000b' }, 'customer_name'],
        ['a numeric customer_name', { customer_name: 12 }, 'customer_name'],
        ['a malformed customer_email', { customer_email: 'not-an-email' }, 'customer_email'],
        ['a customer_email over 254 characters', { customer_email: `a@${`${'b'.repeat(60)}.`.repeat(5)}rs` }, 'customer_email'],
        ['a PIB with a wrong check digit', { customer_pib: '101134701' }, 'customer_pib'],
        ['a PIB starting with 0', { customer_pib: '012345674' }, 'customer_pib'],
        ['an 8-digit PIB', { customer_pib: '10113470' }, 'customer_pib'],
        ['a 10-digit PIB', { customer_pib: '1011347021' }, 'customer_pib'],
        ['a PIB with a separator', { customer_pib: '10113470-2' }, 'customer_pib'],
        ['a PIB with spaces', { customer_pib: ' 101134702' }, 'customer_pib'],
        ['a numeric PIB', { customer_pib: 101134702 }, 'customer_pib'],
        ['limits as an array', { limits: [] }, 'limits'],
        ['limits null', { limits: null }, 'limits'],
        ['a limit name with capitals', { limits: { MaxSeats: 1 } }, 'limits'],
        ['a negative limit', { limits: { max_installations: -1 } }, 'limits'],
        ['a limit over 2147483647', { limits: { max_installations: 2147483648 } }, 'limits'],
        ['a fractional limit', { limits: { max_installations: 1.5 } }, 'limits'],
        ['a limit as a string', { limits: { max_installations: '1' } }, 'limits'],
        ['a feature the product does not offer', { features: ['ACCOUNTING'] }, 'features'],
        ['an unknown feature', { features: ['NOPE'] }, 'features'],
        ['a lower-case feature', { features: ['reports'] }, 'features'],
        ['duplicate features', { features: ['REPORTS', 'REPORTS'] }, 'features'],
        ['features as a string', { features: 'REPORTS' }, 'features'],
        ['features null', { features: null }, 'features'],
        ['negative grace_days', { grace_days: -1 }, 'grace_days'],
        ['grace_days 366', { grace_days: 366 }, 'grace_days'],
        ['fractional grace_days', { grace_days: 1.5 }, 'grace_days'],
        ['grace_days as a string', { grace_days: '7' }, 'grace_days'],
        ['grace_days null', { grace_days: null }, 'grace_days'],
        ['2001-character notes', { notes: 'n'.repeat(2001) }, 'notes'],
        ['numeric notes', { notes: 5 }, 'notes'],
        ['expires_at in the past', { expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
        ['expires_at a moment ago', { expires_at: new Date(Date.now() - 1000).toISOString() }, 'expires_at'],
        ['expires_at not a timestamp', { expires_at: 'tomorrow' }, 'expires_at'],
        ['expires_at without a time', { expires_at: '2099-01-01' }, 'expires_at'],
        ['expires_at without a zone', { expires_at: '2099-01-01T00:00:00' }, 'expires_at'],
        ['expires_at on a day that does not exist', { expires_at: '2099-02-30T00:00:00Z' }, 'expires_at'],
        ['expires_at as a number', { expires_at: 4102444800000 }, 'expires_at'],
        ['expires_at null', { expires_at: null }, 'expires_at'],
        ['expires_at on a PERPETUAL licence', { license_type: 'PERPETUAL', expires_at: future(30) }, 'expires_at'],
        ['an unknown field', { colour: 'red' }, 'colour'],
        ['a field only PUT accepts', { active: false }, 'active'],
      ] as [string, Record<string, unknown>, string][])('%s', async (_label, overrides, field) => {
        const before = await auditCount();
        const licencesBefore = await t.sql('SELECT count(*)::int AS n FROM licenses');
        const res = await t.admin
          .post(LICENSES)
          .send({ ...licenseInput(), ...overrides })
          .expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(fieldsOf(res.body)).toContain(field);
        expect(await auditCount()).toBe(before);
        expect(await t.sql('SELECT count(*)::int AS n FROM licenses')).toEqual(licencesBefore);
      });

      it('an inactive product', async () => {
        await t.admin
          .post('/api/v1/admin/products')
          .send({ code: 'RETIRED', name: 'Retired', key_prefix: 'RT', active: false })
          .expect(201);
        const res = await t.admin
          .post(LICENSES)
          .send(licenseInput({ product_code: 'RETIRED' }))
          .expect(400);
        expect(fieldsOf(res.body)).toEqual(['product_code']);
      });

      it.each([
        ['a JSON array', '[]'],
        ['malformed JSON', '{"product_code":'],
        ['a JSON string', '"x"'],
      ])('a body that is %s', async (_label, raw) => {
        const res = await t.admin.post(LICENSES).set('Content-Type', 'application/json').send(raw).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      });
    });
  });

  describe('GET /licenses/{id}', () => {
    it('returns every stored field, status, grace_ends_at, product, merged limits and only the current seats', async () => {
      const input = licenseInput({
        product_code: 'ERP_SUITE',
        license_type: 'QUARTERLY',
        customer_email: 'erp@example.rs',
        customer_pib: '101134702',
        limits: { max_installations: 2 },
        features: ['PAYROLL'],
        grace_days: 3,
        notes: 'VIP',
      });
      const { id, license_key } = (await t.admin.post(LICENSES).send(input).expect(201)).body;
      const old = await insertSeat(t, id, {
        activated_at: new Date(Date.now() - 5 * DAY_MS),
        released_at: new Date(Date.now() - 4 * DAY_MS),
      });
      const current = await insertSeat(t, id, { hostname: 'till-01', os: 'Windows 11', app_version: '4.2.0', ip: '203.0.113.7' });
      const res = await t.admin.get(`${LICENSES}/${id}`).expect(200);
      expect(res.body).toEqual({
        id,
        product: { code: 'ERP_SUITE', name: 'ERP Suite' },
        product_code: 'ERP_SUITE',
        license_key,
        license_type: 'QUARTERLY',
        customer_name: input.customer_name,
        customer_email: 'erp@example.rs',
        customer_pib: '101134702',
        limits: { max_installations: 2, max_operators: 10 },
        limit_overrides: { max_installations: 2 },
        policy: {
          heartbeat_timeout_seconds: null,
          max_deactivations_per_30_days: null,
          license_file_ttl_days: 30,
          max_uses: null,
          uses_period: 'none',
        },
        policy_overrides: {},
        features: ['PAYROLL'],
        grace_days: 3,
        notes: 'VIP',
        expires_at: expect.any(String),
        grace_ends_at: expect.any(String),
        active: true,
        revoked: false,
        revoked_at: null,
        revoke_reason: null,
        status: 'active',
        store: null,
        created_at: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
        converted_from: null,
        activations: [
          {
            id: current.id,
            machine_fingerprint: current.machine_fingerprint,
            hostname: 'till-01',
            os: 'Windows 11',
            app_version: '4.2.0',
            ip: '203.0.113.7',
            activated_at: expect.stringMatching(/Z$/),
            last_seen_at: expect.stringMatching(/Z$/),
            released_at: null,
            release_reason: null,
            active: true,
          },
        ],
      });
      expect(Date.parse(res.body.grace_ends_at) - Date.parse(res.body.expires_at)).toBe(3 * DAY_MS);
      expect(res.body.activations.map((a: { id: number }) => a.id)).not.toContain(old.id);
    });

    it('404 NOT_FOUND for an unknown id', async () => {
      const res = await t.admin.get(`${LICENSES}/999999`).expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    });

    it.each(['abc', '0', '-1', '1.5', '99999999999', '%20'])('400 VALIDATION_ERROR for the id %s on every route', async (id) => {
      for (const [method, url] of [
        ['get', `${LICENSES}/${id}`],
        ['put', `${LICENSES}/${id}`],
        ['post', `${LICENSES}/${id}/revoke`],
        ['post', `${LICENSES}/${id}/release`],
        ['get', `${LICENSES}/${id}/activations`],
      ] as const) {
        const res = await t.admin[method](url).send(method === 'get' ? undefined : { reason: 'x', notes: 'x' });
        expect([res.status, res.body.error?.code, url]).toEqual([400, 'VALIDATION_ERROR', url]);
        expect(fieldsOf(res.body)).toEqual(['id']);
      }
    });
  });

  describe('GET /licenses/{id}/activations', () => {
    it('lists every record, current and released, newest first', async () => {
      const { id } = await createLicense(t, { limits: { max_installations: 3 } });
      const oldest = await insertSeat(t, id, {
        activated_at: new Date(Date.now() - 3 * DAY_MS),
        released_at: new Date(Date.now() - 2 * DAY_MS),
        release_reason: 'deactivated',
      });
      const middle = await insertSeat(t, id, {
        activated_at: new Date(Date.now() - 2 * DAY_MS),
        released_at: new Date(Date.now() - DAY_MS),
        release_reason: 'force_released',
      });
      const newest = await insertSeat(t, id, { machine_fingerprint: fingerprint('newest') });
      const res = await t.admin.get(`${LICENSES}/${id}/activations`).expect(200);
      expect(res.body.map((a: { id: number }) => a.id)).toEqual([newest.id, middle.id, oldest.id]);
      expect(res.body.map((a: { active: boolean }) => a.active)).toEqual([true, false, false]);
      expect(res.body.map((a: { release_reason: string | null }) => a.release_reason)).toEqual([null, 'force_released', 'deactivated']);
    });

    it('is empty for a licence never activated, 404 for an unknown licence', async () => {
      const { id } = await createLicense(t);
      expect((await t.admin.get(`${LICENSES}/${id}/activations`).expect(200)).body).toEqual([]);
      expect((await t.admin.get(`${LICENSES}/999999/activations`).expect(404)).body.error.code).toBe('NOT_FOUND');
    });
  });

  it('documents every licence, audit and stats route in Swagger with schemas, errors and the API key', async () => {
    const doc = (await t.http().get('/api/docs-json').expect(200)).body;
    const routes: [string, string, string[]][] = [
      ['/api/v1/admin/licenses', 'post', ['201', '400', '401']],
      ['/api/v1/admin/licenses', 'get', ['200', '400', '401']],
      ['/api/v1/admin/licenses/{id}', 'get', ['200', '400', '401', '404']],
      ['/api/v1/admin/licenses/{id}', 'put', ['200', '400', '401', '404', '409']],
      ['/api/v1/admin/licenses/{id}/revoke', 'post', ['200', '400', '401', '404', '409']],
      ['/api/v1/admin/licenses/{id}/release', 'post', ['200', '400', '401', '404', '409']],
      ['/api/v1/admin/licenses/{id}/activations', 'get', ['200', '400', '401', '404']],
      ['/api/v1/admin/audit', 'get', ['200', '400', '401']],
      ['/api/v1/admin/stats', 'get', ['200', '401']],
    ];
    for (const [path, method, statuses] of routes) {
      const op = doc.paths[path]?.[method];
      expect([path, method, op && statuses.every((s) => s in op.responses)]).toEqual([path, method, true]);
      expect(op.security).toEqual([{ 'api-key': [] }, { bearer: [] }]);
      const success = op.responses[statuses[0]].content['application/json'].schema;
      expect(success.$ref ?? success.items?.$ref).toMatch(/^#\/components\/schemas\//);
    }
    expect(doc.paths['/api/v1/admin/licenses'].get.responses['200'].headers['X-Total-Count']).toBeDefined();
    expect(doc.paths['/api/v1/admin/licenses'].get.responses['200'].headers.Link).toBeDefined();
    expect(doc.paths['/api/v1/admin/audit'].get.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      'action',
      'actor',
      'actor_type',
      'after',
      'from',
      'license_id',
      'limit',
      'offset',
      'product',
      'to',
    ]);
    expect(doc.components.schemas.CreateLicenseDto.required.sort()).toEqual(['customer_name', 'license_type', 'product_code']);
  });
});
