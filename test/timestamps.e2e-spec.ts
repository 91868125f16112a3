import { createLicense, fingerprint, licenseInput } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/**
 * Timestamps are accepted only from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z once their zone is applied:
 * `9999-12-31T23:59:59-23:59` was stored, and signed, as `+010000-...`, which no ISO 8601 reader expects.
 */
const AFTER_9999 = ['9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59-00:01', '9999-12-31T23:30:00-01:00'];
const BEFORE_0001 = ['0000-12-31T23:59:59Z', '0001-01-01T00:00:00+00:01'];
const LAST = '9999-12-31T23:59:59Z';

describe('timestamps outside years 0001-9999', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t?.close());

  const expectFieldError = (body: { error: { code: string; details: { fields: { field: string }[] } } }, field: string) => {
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.fields.map((f) => f.field)).toContain(field);
  };

  it.each(AFTER_9999)('licence creation refuses expires_at %s with 400, and stores nothing', async (expiresAt) => {
    const before = await t.sql('SELECT count(*)::int AS n FROM licenses');
    const res = await t.admin
      .post('/api/v1/admin/licenses')
      .send(licenseInput({ expires_at: expiresAt }))
      .expect(400);
    expectFieldError(res.body, 'expires_at');
    expect(await t.sql('SELECT count(*)::int AS n FROM licenses')).toEqual(before);
  });

  it.each([...AFTER_9999, ...BEFORE_0001])('PUT refuses expires_at %s with 400 and keeps the stored expiry', async (expiresAt) => {
    const license = await createLicense(t);
    const stored = await t.sql('SELECT expires_at FROM licenses WHERE id = $1', [license.id]);
    const res = await t.admin.put(`/api/v1/admin/licenses/${license.id}`).send({ expires_at: expiresAt }).expect(400);
    expectFieldError(res.body, 'expires_at');
    expect(await t.sql('SELECT expires_at FROM licenses WHERE id = $1', [license.id])).toEqual(stored);
  });

  it('accepts the last second of 9999, stores and signs it as a four-digit year', async () => {
    const license = await createLicense(t, { expires_at: LAST });
    const details = await t.admin.get(`/api/v1/admin/licenses/${license.id}`).expect(200);
    expect(details.body.expires_at).toBe('9999-12-31T23:59:59.000Z');
    const activated = await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: license.license_key, machine_fingerprint: fingerprint(), hostname: 'h' })
      .expect(200);
    expect(JSON.stringify(activated.body)).not.toContain('+010000');
    expect(activated.body.license.expires_at).toBe('9999-12-31T23:59:59.000Z');
    const updated = await t.admin.put(`/api/v1/admin/licenses/${license.id}`).send({ expires_at: '9999-12-31T23:59:59+23:59' }).expect(200);
    expect(updated.body.expires_at).toBe('9999-12-31T00:00:59.000Z');
  });

  it.each(['from', 'to'])('the audit filter %s refuses times after 9999 and before 0001 with 400', async (filter) => {
    for (const value of [...AFTER_9999, ...BEFORE_0001]) {
      const res = await t.admin.get(`/api/v1/admin/audit?${filter}=${encodeURIComponent(value)}`).expect(400);
      expectFieldError(res.body, filter);
    }
    await t.admin.get(`/api/v1/admin/audit?${filter}=${encodeURIComponent(LAST)}`).expect(200);
    await t.admin.get(`/api/v1/admin/audit?${filter}=${encodeURIComponent('0001-01-01T00:00:00Z')}`).expect(200);
  });
});
