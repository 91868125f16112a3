import { createHash, createPublicKey } from 'node:crypto';
import { MIGRATIONS } from '../src/database/data-source-options';
import { createTestApp, TestApp } from './support/test-app';
import { requestAuditCount } from './support/factories';

const expectError = (body: unknown, code: string) =>
  expect(body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });

describe('foundation: health, errors, public key, Swagger', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  describe('GET /api/v1/health', () => {
    it('reports ok with the database up, without authentication', async () => {
      const res = await t.http().get('/api/v1/health').expect(200);
      expect(res.body).toEqual({ status: 'ok', database: 'up' });
    });

    it('answers liveness without touching the database', async () => {
      await t.http().get('/api/v1/health/live').expect(200, { status: 'ok' });
    });

    it('reports 503 with the database down, keeps serving, and recovers when it returns', async () => {
      await t.cutDatabase();
      try {
        const started = Date.now();
        const res = await t.http().get('/api/v1/health').expect(503);
        expect(res.body).toEqual({ status: 'error', database: 'down' });
        const products = await t.admin.get('/api/v1/admin/products').expect(503);
        expectError(products.body, 'SERVICE_UNAVAILABLE');
        expect(Date.now() - started).toBeLessThan(10_000);
        await t.http().get('/api/v1/health/live').expect(200);
      } finally {
        await t.restoreDatabase();
      }
      await t.http().get('/api/v1/health').expect(200, { status: 'ok', database: 'up' });
      await t.admin.get('/api/v1/admin/products').expect(200);
    });
  });

  describe('error bodies', () => {
    it('404 NOT_FOUND for an unknown route', async () => {
      const res = await t.http().get('/api/v1/nothing-here').expect(404);
      expectError(res.body, 'NOT_FOUND');
    });

    it('400 VALIDATION_ERROR with details.fields for malformed JSON', async () => {
      const res = await t.admin.post('/api/v1/admin/products').set('Content-Type', 'application/json').send('{"code": ').expect(400);
      expectError(res.body, 'VALIDATION_ERROR');
      expect(res.body.error.details.fields).toEqual([{ field: 'body', message: expect.any(String) }]);
    });

    it('413 PAYLOAD_TOO_LARGE for a JSON body over 64 KiB', async () => {
      const res = await t.admin
        .post('/api/v1/admin/products')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ name: 'x'.repeat(70 * 1024) }))
        .expect(413);
      expectError(res.body, 'PAYLOAD_TOO_LARGE');
    });

    it('accepts a body just under 64 KiB far enough to validate it', async () => {
      const res = await t.admin
        .post('/api/v1/admin/products')
        .send({ code: 'BIG', name: 'x'.repeat(60 * 1024), key_prefix: 'BG' })
        .expect(400);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('name');
    });

    it('415 for an unsupported charset', async () => {
      const res = await t.admin
        .post('/api/v1/admin/products')
        .set('Content-Type', 'application/json; charset=ebcdic')
        .send('{}')
        .expect(415);
      expectError(res.body, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('400 for a non-object JSON body', async () => {
      for (const body of ['[]', '"text"', '42', 'null']) {
        const res = await t.admin.post('/api/v1/admin/products').set('Content-Type', 'application/json').send(body);
        expect(res.status).toBe(400);
        expectError(res.body, 'VALIDATION_ERROR');
      }
    });

    // A form or text/plain body needs no CORS preflight: any web page could make a visitor's browser send one.
    it.each([
      ['text/plain', '{"license_key":"X"}'],
      ['text/plain; charset=utf-8', 'license_key=X'],
      ['application/x-www-form-urlencoded', 'license_key=X&machine_fingerprint=y&hostname=h'],
      ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="license_key"\r\n\r\nX\r\n--b--\r\n'],
      ['application/xml', '<a/>'],
    ])('415 UNSUPPORTED_MEDIA_TYPE for a %s body on every /api/v1 route, before anything runs', async (type, body) => {
      const before = await requestAuditCount(t);
      for (const [method, path] of [
        ['post', '/api/v1/activate'],
        ['post', '/api/v1/deactivate'],
        ['post', '/api/v1/validate'],
        ['post', '/api/v1/admin/products'],
        ['put', '/api/v1/admin/products/1'],
        ['post', '/api/v1/admin/licenses'],
        ['put', '/api/v1/admin/licenses/1'],
        ['post', '/api/v1/admin/licenses/1/revoke'],
        ['post', '/api/v1/admin/licenses/1/release'],
      ] as const) {
        const res = await t.admin[method === 'post' ? 'post' : 'put'](path).set('Content-Type', type).send(body);
        expect([path, res.status]).toEqual([path, 415]);
        expectError(res.body, 'UNSUPPORTED_MEDIA_TYPE');
      }
      expect(await requestAuditCount(t)).toEqual(before);
    });

    it('415 for a body without any Content-Type', async () => {
      const res = await t
        .http()
        .post('/api/v1/validate')
        .serialize((x: string) => x)
        .unset('Content-Type')
        .send('license_key=X');
      expect(res.status).toBe(415);
      expectError(res.body, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('takes JSON with a charset and a body-less POST whatever its Content-Type', async () => {
      await t.admin
        .post('/api/v1/admin/products')
        .set('Content-Type', 'application/json; charset=utf-8')
        .send('{"code":"CHARSET_OK","name":"x","key_prefix":"CSOK"}')
        .expect(201);
      // No body: not a form, so not refused as one (the route's own validation answers).
      const empty = await t.http().post('/api/v1/validate').set('Content-Type', 'text/plain').expect(400);
      expectError(empty.body, 'VALIDATION_ERROR');
    });

    it('documents 415 on every operation that takes a body', async () => {
      const doc = (await t.http().get('/api/docs-json').expect(200)).body as {
        paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
      };
      const withBody = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => op.requestBody)
          .map(([method, op]) => [`${method} ${path}`, Boolean(op.responses['415'])]),
      );
      expect(withBody.length).toBeGreaterThanOrEqual(9);
      expect(withBody.filter(([, documented]) => !documented)).toEqual([]);
    });

    it('never includes a stack trace', async () => {
      const res = await t.admin.post('/api/v1/admin/products').set('Content-Type', 'application/json').send('{bad').expect(400);
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(js|ts):\d+/);
    });

    it('returns a request id header, echoing a well-formed one', async () => {
      const res = await t.http().get('/api/v1/health').set('X-Request-Id', 'abc-123').expect(200);
      expect(res.headers['x-request-id']).toBe('abc-123');
      const generated = await t.http().get('/api/v1/health').set('X-Request-Id', 'bad id with spaces').expect(200);
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('GET /api/v1/public-key', () => {
    it('returns the RSA public key and a key_id derived from its DER SPKI', async () => {
      const res = await t.http().get('/api/v1/public-key').expect(200);
      expect(res.body.algorithm).toBe('RSA-SHA256');
      const key = createPublicKey(res.body.public_key_pem);
      expect(key.asymmetricKeyType).toBe('rsa');
      expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
      const der = key.export({ type: 'spki', format: 'der' });
      expect(res.body.key_id).toBe(createHash('sha256').update(der).digest('hex').slice(0, 16));
    });
  });

  describe('Swagger', () => {
    it('serves the UI and the JSON document with the X-API-Key scheme and the error schema', async () => {
      await t.http().get('/api/docs').expect(200).expect('Content-Type', /html/);
      const res = await t.http().get('/api/docs-json').expect(200);
      expect(res.body.components.securitySchemes['api-key']).toEqual(
        expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      );
      expect(res.body.components.schemas.ErrorResponseDto).toBeDefined();
      expect(res.body.paths['/api/v1/admin/products'].get.security).toEqual([{ 'api-key': [] }, { bearer: [] }]);
    });
  });

  describe('schema', () => {
    it('was created by migrations with the seed products', async () => {
      const migrations = await t.sql('SELECT name FROM migrations ORDER BY id');
      expect(migrations.map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
      const tables = await t.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1");
      expect(tables.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(['activations', 'audit_entries', 'licenses', 'products', 'session', 'users']),
      );
    });

    it('keeps the audit log append-only', async () => {
      await t.sql(`INSERT INTO audit_entries (action, actor_type) VALUES ('product.created', 'system')`);
      await expect(t.sql('UPDATE audit_entries SET actor = $1', ['x'])).rejects.toThrow(/append-only/);
      await expect(t.sql('DELETE FROM audit_entries')).rejects.toThrow(/append-only/);
    });
  });
});
