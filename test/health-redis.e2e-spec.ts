import { createTestApp, TestApp } from './support/test-app';

/** Health with REDIS_URL set. Uses a Redis URL nobody listens on, so it runs on any machine. */
describe('GET /api/v1/health with Redis configured but unreachable', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp({ redisUrl: 'redis://127.0.0.1:1' })));
  afterAll(() => t.close());

  it('reports degraded with 200: the database is up and the server keeps serving', async () => {
    const res = await t.http().get('/api/v1/health').expect(200);
    expect(res.body).toEqual({ status: 'degraded', database: 'up', redis: 'down' });
    await t.admin.get('/api/v1/admin/products').expect(200);
  });
});
