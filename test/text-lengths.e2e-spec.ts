import type { Response } from 'supertest';
import { loggedInAgent, postForm } from './dashboard-helpers';
import { createLicense, fingerprint, insertSeat, licenseInput } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Text limits count characters as PostgreSQL's varchar(n) does: Unicode code points. validator.js's isLength (class-validator's
 * MaxLength) counted a character and its variation selector as one, so 101 × "❤️" (202 code points) passed a 200-character
 * limit and then failed the column: a 500. Each bounded field is tried at its limit (accepted, stored unchanged) and one over
 * (400 VALIDATION_ERROR naming the field), with variation selectors and with characters outside the BMP.
 */
const HEART = '\u2764\uFE0F'; // 2 code points, 2 UTF-16 units; isLength counted 1
const GRIN = '\u{1F600}'; // 1 code point, 2 UTF-16 units (a surrogate pair)
const MIXED = `${HEART}${GRIN}\u00E9`; // 4 code points

/** Exactly `n` code points: `unit` repeated, padded with ASCII. */
function text(unit: string, n: number): string {
  const per = [...unit].length;
  return unit.repeat(Math.floor(n / per)) + 'a'.repeat(n % per);
}

const UNITS = [
  ['variation selectors', HEART],
  ['characters outside the BMP', GRIN],
  ['a mix', MIXED],
] as const;

interface BoundedField {
  route: string;
  /** Field name in the error's details.fields */
  field: string;
  max: number;
  /** Sends the value; resolves to the response. */
  send: (t: TestApp, value: string) => Promise<Response>;
  okStatus: number;
  /** The stored value after an accepted request, where the field is stored. */
  stored?: (t: TestApp, res: Response) => Promise<string>;
  /** An accepted value that is not a validation error but a domain answer (lookups of keys and codes). */
  okCode?: string;
  units?: readonly (readonly [string, string])[];
  /** Fixed ASCII start of the value (a URL's scheme and host), counted in the limit. */
  prefix?: string;
}

let productSeq = 0;
const newProduct = (t: TestApp, name = 'Length test product') => {
  productSeq += 1;
  return t.admin.post('/api/v1/admin/products').send({ code: `LEN_${productSeq}`, name, key_prefix: `LN${productSeq}` });
};
const activate = async (t: TestApp, fields: Record<string, string>) => {
  const license = await createLicense(t);
  return t
    .http()
    .post('/api/v1/activate')
    .send({ license_key: license.license_key, machine_fingerprint: fingerprint(), hostname: 'host', ...fields });
};
const licenseColumn = (column: string) => async (t: TestApp, res: Response) =>
  (await t.sql(`SELECT ${column} AS v FROM licenses WHERE id = $1`, [res.body.id]))[0].v as string;
const seatColumn = (column: string) => async (t: TestApp, _res: Response) =>
  (await t.sql(`SELECT ${column} AS v FROM activations ORDER BY id DESC LIMIT 1`))[0].v as string;
const webhookColumn = (column: string) => async (t: TestApp, res: Response) =>
  (await t.sql(`SELECT ${column} AS v FROM webhook_endpoints WHERE id = $1`, [res.body.id]))[0].v as string;
const newWebhook = (t: TestApp, fields: Record<string, string> = {}) =>
  t.admin.post('/api/v1/admin/webhooks').send({ url: 'https://93.184.216.34/hook', events: ['*'], ...fields });
const HOOK_URL = 'https://93.184.216.34/'; // a public literal address: no DNS
const productName = async (t: TestApp, res: Response) => (await t.sql('SELECT name AS v FROM products WHERE id = $1', [res.body.id]))[0].v;

// An e-mail address takes variation selectors in its local part (validator.js allows U+FE0F there), not surrogates.
const email = (n: number) => `${HEART.repeat(10)}@${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(n - 21 - 192)}`;

const FIELDS: BoundedField[] = [
  {
    route: 'POST /licenses',
    field: 'customer_name',
    max: 200,
    okStatus: 201,
    send: (t, v) => t.admin.post('/api/v1/admin/licenses').send(licenseInput({ customer_name: v })),
    stored: licenseColumn('customer_name'),
  },
  {
    route: 'POST /licenses',
    field: 'notes',
    max: 2000,
    okStatus: 201,
    send: (t, v) => t.admin.post('/api/v1/admin/licenses').send(licenseInput({ notes: v })),
    stored: licenseColumn('notes'),
  },
  {
    route: 'POST /licenses',
    field: 'customer_email',
    max: 254,
    okStatus: 201,
    send: (t, v) => t.admin.post('/api/v1/admin/licenses').send(licenseInput({ customer_email: v })),
    stored: licenseColumn('customer_email'),
    units: [['variation selectors', HEART]],
  },
  ...(['customer_name', 'notes'] as const).map((field): BoundedField => ({
    route: 'PUT /licenses/{id}',
    field,
    max: field === 'notes' ? 2000 : 200,
    okStatus: 200,
    send: async (t, v) => t.admin.put(`/api/v1/admin/licenses/${(await createLicense(t)).id}`).send({ [field]: v }),
    stored: licenseColumn(field),
  })),
  {
    route: 'PUT /licenses/{id}',
    field: 'customer_email',
    max: 254,
    okStatus: 200,
    send: async (t, v) => t.admin.put(`/api/v1/admin/licenses/${(await createLicense(t)).id}`).send({ customer_email: v }),
    stored: licenseColumn('customer_email'),
    units: [['variation selectors', HEART]],
  },
  {
    route: 'POST /licenses/{id}/revoke',
    field: 'reason',
    max: 500,
    okStatus: 200,
    send: async (t, v) => t.admin.post(`/api/v1/admin/licenses/${(await createLicense(t)).id}/revoke`).send({ reason: v }),
    stored: licenseColumn('revoke_reason'),
  },
  {
    route: 'POST /licenses/{id}/release',
    field: 'reason',
    max: 500,
    okStatus: 200,
    send: async (t, v) => {
      const license = await createLicense(t);
      await insertSeat(t, license.id);
      return t.admin.post(`/api/v1/admin/licenses/${license.id}/release`).send({ reason: v });
    },
    stored: async (t) =>
      (await t.sql("SELECT details->>'reason' AS v FROM audit_entries WHERE action = 'license.released' ORDER BY id DESC LIMIT 1"))[0].v,
  },
  { route: 'POST /products', field: 'name', max: 200, okStatus: 201, send: (t, v) => newProduct(t, v), stored: productName },
  {
    route: 'PUT /products/{id}',
    field: 'name',
    max: 200,
    okStatus: 200,
    send: async (t, v) => t.admin.put(`/api/v1/admin/products/${(await newProduct(t)).body.id}`).send({ name: v }),
    stored: productName,
  },
  {
    route: 'POST /activate',
    field: 'hostname',
    max: 255,
    okStatus: 200,
    send: (t, v) => activate(t, { hostname: v }),
    stored: seatColumn('hostname'),
  },
  { route: 'POST /activate', field: 'os', max: 100, okStatus: 200, send: (t, v) => activate(t, { os: v }), stored: seatColumn('os') },
  {
    route: 'POST /activate',
    field: 'app_version',
    max: 50,
    okStatus: 200,
    send: (t, v) => activate(t, { app_version: v }),
    stored: seatColumn('app_version'),
  },
  // docs/security.md, Review findings (round 3): the webhook fields were still counted by MaxLength (a 500 on both routes).
  ...(['description', 'url'] as const).flatMap((field): BoundedField[] => {
    const max = field === 'url' ? 2048 : 500;
    const prefix = field === 'url' ? HOOK_URL : undefined;
    return [
      {
        route: 'POST /webhooks',
        field,
        max,
        prefix,
        okStatus: 201,
        send: (t, v) => newWebhook(t, { [field]: v }),
        stored: webhookColumn(field),
      },
      {
        route: 'PUT /webhooks/{id}',
        field,
        max,
        prefix,
        okStatus: 200,
        send: async (t, v) => t.admin.put(`/api/v1/admin/webhooks/${(await newWebhook(t)).body.id}`).send({ [field]: v }),
        stored: webhookColumn(field),
      },
    ];
  }),
  // Looked up, not stored: at the limit the lookup answers, one over is a validation error.
  {
    route: 'POST /validate',
    field: 'license_key',
    max: 64,
    okStatus: 400,
    okCode: 'INVALID_KEY',
    send: (t, v) => t.http().post('/api/v1/validate').send({ license_key: v, machine_fingerprint: fingerprint() }),
  },
  {
    route: 'POST /activate',
    field: 'product',
    max: 32,
    okStatus: 400,
    okCode: 'PRODUCT_MISMATCH',
    send: (t, v) => activate(t, { product: v }),
  },
  {
    route: 'GET /licenses',
    field: 'q',
    max: 200,
    okStatus: 200,
    send: (t, v) => t.admin.get(`/api/v1/admin/licenses?q=${encodeURIComponent(v)}`),
  },
  {
    route: 'GET /licenses',
    field: 'product',
    max: 32,
    okStatus: 200,
    send: (t, v) => t.admin.get(`/api/v1/admin/licenses?product=${encodeURIComponent(v)}`),
  },
];

describe('text limits count code points, as varchar(n) does', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  it('the reported case: 101 × "❤️" as customer_name is a 400 on POST and PUT, not a 500', async () => {
    const name = HEART.repeat(101);
    const created = await t.admin
      .post('/api/v1/admin/licenses')
      .send(licenseInput({ customer_name: name }))
      .expect(400);
    expect(created.body.error.code).toBe('VALIDATION_ERROR');
    expect(created.body.error.details.fields).toEqual([
      { field: 'customer_name', message: 'customer_name must be shorter than or equal to 200 characters' },
    ]);
    const license = await createLicense(t);
    const updated = await t.admin.put(`/api/v1/admin/licenses/${license.id}`).send({ customer_name: name }).expect(400);
    expect(updated.body.error.code).toBe('VALIDATION_ERROR');
  });

  describe.each(FIELDS.map((f) => [`${f.route} ${f.field} (${f.max})`, f] as const))('%s', (_label, f) => {
    const value = (unit: string, n: number) =>
      f.field === 'customer_email' ? email(n) : (f.prefix ?? '') + text(unit, n - [...(f.prefix ?? '')].length);

    it.each(f.units ?? UNITS)(
      `with %s: exactly ${f.max} characters accepted (stored unchanged), ${f.max + 1} refused with 400`,
      async (_u, unit) => {
        const atMax = value(unit, f.max);
        expect([...atMax]).toHaveLength(f.max);
        const ok = await f.send(t, atMax);
        expect([ok.status, ok.body?.error?.code ?? null]).toEqual([f.okStatus, f.okCode ?? null]);
        if (f.stored) expect(await f.stored(t, ok)).toBe(atMax);

        const over = value(unit, f.max + 1);
        const refused = await f.send(t, over);
        expect(refused.status).toBe(400);
        expect(refused.body.error.code).toBe('VALIDATION_ERROR');
        expect(refused.body.error.details.fields.map((e: { field: string }) => e.field)).toContain(f.field);
      },
    );
  });

  it('the dashboard form applies the same count: 101 × "❤️" re-renders the form with the message, nothing stored', async () => {
    const { agent, token } = await loggedInAgent(t);
    const before = (await t.sql('SELECT count(*)::int AS n FROM licenses'))[0].n;
    const res = await postForm(agent, await token(), '/licenses', {
      product_code: 'ERP_SUITE',
      license_type: 'QUARTERLY',
      customer_name: HEART.repeat(101),
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Customer name must be shorter than or equal to 200 characters');
    expect((await t.sql('SELECT count(*)::int AS n FROM licenses'))[0].n).toBe(before);
  });

  it('the reported webhook case: 251 × "❤️" as description and a URL of them are 400 on POST and PUT, not 500', async () => {
    const description = HEART.repeat(251);
    const url = HOOK_URL + HEART.repeat(1020);
    const id = (await newWebhook(t)).body.id;
    for (const body of [{ description }, { url }] as Record<string, string>[]) {
      for (const res of [await newWebhook(t, body), await t.admin.put(`/api/v1/admin/webhooks/${id}`).send(body)]) {
        expect([res.status, res.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
      }
    }
  });
});
