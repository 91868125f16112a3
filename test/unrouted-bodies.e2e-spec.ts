import { createTestApp, TEST_API_KEY, TestApp } from './support/test-app';

/**
 * A body sent with a method or to a path that no route takes (docs/admin-api.md, Conventions): the router's 404, before
 * any body limit or type check. Only a route that takes a body reads one, under its limit.
 */
describe('bodies no route takes', () => {
  let t: TestApp;
  const big = JSON.stringify({ filler: 'x'.repeat(100 * 1024) });

  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);
  afterAll(() => t?.close(), 60_000);

  it('a large POST to an artifact upload path (a PUT route) is 404 NOT_FOUND, not 413 about its size', async () => {
    const res = await t.admin
      .post('/api/v1/admin/releases/1/artifacts/Till_1.4.0_x64-setup.exe?platform=win32&arch=x64')
      .set('content-type', 'application/octet-stream')
      .send(Buffer.alloc(200 * 1024, 1));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('a large JSON body to a path no route has, or with a method its route does not take, is 404', async () => {
    for (const [method, path] of [
      ['post', '/api/v1/no-such-route'],
      ['put', '/api/v1/activate'],
      ['delete', '/api/v1/admin/licenses'],
    ] as const) {
      const res = await t.http()[method](path).set('x-api-key', TEST_API_KEY).set('content-type', 'application/json').send(big);
      expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({ method, path, status: 404, code: 'NOT_FOUND' });
    }
  });

  it('a body of another type to a path no route has is 404, not 415', async () => {
    const res = await t.http().post('/api/v1/no-such-route').set('content-type', 'text/plain').send('hello');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('a route that takes a body still refuses one over 64 KiB (413) and one of another type (415)', async () => {
    const large = await t.http().post('/api/v1/activate').set('content-type', 'application/json').send(big);
    expect(large.status).toBe(413);
    expect(large.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const text = await t.http().post('/api/v1/activate').set('content-type', 'text/plain').send('hello');
    expect(text.status).toBe(415);
  });

  it('a route with a path parameter takes its body as before', async () => {
    const res = await t.admin.put('/api/v1/admin/licenses/999999').set('content-type', 'application/json').send({ active: false });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    const bad = await t.admin.put('/api/v1/admin/licenses/999999').set('content-type', 'application/json').send('{"active": nope}');
    expect(bad.status).toBe(400);
  });
});
