import { createTestApp, TestApp } from './support/test-app';

/** Health with REDIS_URL set. Uses a Redis URL nobody listens on, so it runs on any machine. */
describe('GET /api/v1/health with Redis configured but unreachable', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp({ redisUrl: 'redis://127.0.0.1:1' })), 60_000);
  afterAll(() => t.close());

  it('reports degraded with 200: the database is up and the server keeps serving', async () => {
    const res = await t.http().get('/api/v1/health').expect(200);
    expect(res.body).toEqual({ status: 'degraded', database: 'up', redis: 'down' });
    await t.admin.get('/api/v1/admin/products').expect(200);
  });
});

describe('rate limits with Redis configured but unreachable', () => {
  let t: TestApp;
  beforeAll(
    async () =>
      (t = await createTestApp({
        redisUrl: 'redis://127.0.0.1:1',
        rateLimits: { activate: 2, deactivate: 2, validate: 2, heartbeat: 2, admin: 600, login: 5 },
      })),
    60_000,
  );
  afterAll(() => t.close());

  it('fail open: client endpoints keep answering normally instead of 429 or 5xx', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t
        .http()
        .post('/api/v1/validate')
        .send({ license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: 'sha256:' + '0'.repeat(64) });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_KEY');
    }
  });
});
