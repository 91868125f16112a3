import { createTestApp, TestApp } from './support/test-app';

type Operation = { requestBody?: unknown; 'x-required-scope'?: string };
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * docs/security.md, Review findings (round 3): the admin API refuses unknown fields, also on routes that take no body
 * (rotate, rotate-secret, retry, deletes and reads), where `{"zz_unknown": 1}` used to pass. The routes are taken
 * from the app's OpenAPI document: every admin operation (it has a required scope) without a request body.
 */
describe('admin routes without a body refuse one', () => {
  let t: TestApp;
  let routes: { method: (typeof METHODS)[number]; path: string; url: string }[];
  beforeAll(async () => {
    t = await createTestApp();
    const paths = t.openApi.paths as Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
    routes = Object.entries(paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]?.['x-required-scope'] !== undefined && item[m]?.requestBody === undefined).map((method) => ({
        method,
        path,
        // An id that exists nowhere: the body is judged before the handler looks anything up.
        url: path.replace(/\{[^}]+\}/g, '999999'),
      })),
    );
  }, 60_000);
  afterAll(() => t.close());

  const send = (method: (typeof METHODS)[number], url: string) => t.http()[method](url).set('X-API-Key', t.config.apiKeys[0]);

  it('finds them, the reported ones among them', () => {
    const names = routes.map((r) => `${r.method.toUpperCase()} ${r.path}`);
    // Rotate takes an optional body ({algorithm}) since Ed25519 keys: its DTO refuses unknown fields (test/envelopes.e2e-spec.ts).
    for (const reported of [
      'POST /api/v1/admin/webhooks/{id}/rotate-secret',
      'POST /api/v1/admin/webhook-deliveries/{id}/retry',
      'DELETE /api/v1/admin/tokens/{id}',
    ])
      expect(names).toContain(reported);
  });

  it('an unknown field, or an array, is 400 VALIDATION_ERROR naming it, on every one of them', async () => {
    for (const { method, path, url } of routes) {
      const res = await send(method, url).send({ zz_unknown: 1 });
      expect([method, path, res.status, res.body.error?.code, res.body.error?.details?.fields]).toEqual([
        method,
        path,
        400,
        'VALIDATION_ERROR',
        [{ field: 'zz_unknown', message: 'property zz_unknown should not exist' }],
      ]);
      const array = await send(method, url).send([1]);
      expect([method, path, array.status, array.body.error?.code]).toEqual([method, path, 400, 'VALIDATION_ERROR']);
    }
  });

  it("no body, or {}, is still accepted (the answer is the route's own: 2xx, or 404 for the made-up id)", async () => {
    for (const { method, path, url } of routes) {
      for (const res of [await send(method, url), await send(method, url).send({})]) {
        expect([method, path, res.body?.error?.code === 'VALIDATION_ERROR', res.status < 500]).toEqual([method, path, false, true]);
      }
    }
  });

  it('credentials are checked first: without them an unknown field is 401, so it tells nothing', async () => {
    const res = await t.http().post('/api/v1/admin/signing-keys/rotate').send({ zz_unknown: 1 });
    expect([res.status, res.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
  });

  it('a real body on a route with a DTO still goes to its DTO (the unknown field named by the strict pipe)', async () => {
    const res = await t.admin.post('/api/v1/admin/licenses/999999/revoke').send({ reason: 'x', zz_unknown: 1 });
    expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['zz_unknown']);
  });
});
