import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TEST_API_KEY, TestApp } from './support/test-app';

describe('GET /metrics', () => {
  let t: TestApp;
  beforeAll(
    async () =>
      (t = await createTestApp({
        metricsToken: 'metrics-token-0123456789',
        rateLimits: { activate: 3, deactivate: 10, validate: 60, heartbeat: 60, admin: 600, login: 5 },
      })),
    60_000,
  );
  afterAll(() => t.close());

  it('is refused without credentials', async () => {
    const res = await t.http().get('/metrics').expect(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    await t.http().get('/metrics').set('Authorization', 'Bearer wrong-token').expect(401);
  });

  it('serves Prometheus text with the METRICS_TOKEN or the API key', async () => {
    await t
      .http()
      .get('/metrics')
      .set('Authorization', 'Bearer metrics-token-0123456789')
      .expect(200)
      .expect('Content-Type', /text\/plain/);
    await t.http().get('/metrics').set('X-API-Key', TEST_API_KEY).expect(200);
  });

  it('counts requests per route template and status, and reports the database pool', async () => {
    await t.admin.get('/api/v1/admin/products/1').expect(200);
    await t.admin.get('/api/v1/admin/products/999999').expect(404);
    await t.http().get('/no/such/route').expect(404);
    const res = await t.http().get('/metrics').set('X-API-Key', TEST_API_KEY).expect(200);
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/admin\/products\/:id",status="200"\} 1/);
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/admin\/products\/:id",status="404"\} 1/);
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    expect(res.text).toMatch(/http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/admin\/products\/:id"\}/);
    expect(res.text).toMatch(/db_pool_connections_total \d+/);
    expect(res.text).toMatch(/db_pool_connections_max 10/);
  });

  it('counts activations by result code and rate-limit rejections by throttler', async () => {
    const license = await createLicense(t);
    const fp = fingerprint('metrics');
    await t.http().post('/api/v1/activate').send({ license_key: license.license_key, machine_fingerprint: fp, hostname: 'm' }).expect(200);
    await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: fp, hostname: 'm' })
      .expect(400);
    await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: license.license_key, machine_fingerprint: fingerprint('other'), hostname: 'o' })
      .expect(400);
    await t.http().post('/api/v1/activate').send({ license_key: license.license_key, machine_fingerprint: fp, hostname: 'm' }).expect(429);
    const res = await t.http().get('/metrics').set('X-API-Key', TEST_API_KEY).expect(200);
    expect(res.text).toMatch(/licence_activations_total\{result="OK"\} 1/);
    expect(res.text).toMatch(/licence_activations_total\{result="INVALID_KEY"\} 1/);
    expect(res.text).toMatch(/licence_activations_total\{result="ALREADY_ACTIVATED"\} 1/);
    expect(res.text).toMatch(/rate_limit_rejections_total\{throttler="activate"\} 1/);
  });

  it('counts every /metrics request, wrong keys included, against the admin API limit of the IP: no side door for guessing keys', async () => {
    const limited = await createTestApp({
      metricsToken: 'metrics-token-0123456789',
      rateLimits: { activate: 10, deactivate: 10, validate: 60, heartbeat: 60, admin: 3, login: 5 },
    });
    try {
      await limited.http().get('/metrics').set('X-API-Key', 'guess-1-0123456789abcdef').expect(401);
      await limited.http().get('/metrics').set('Authorization', 'Bearer guess-2-0123456789').expect(401);
      await limited.http().get('/metrics').set('X-API-Key', TEST_API_KEY).expect(200);
      // The fourth request of the minute is refused before the key is looked at, even the right one...
      const refused = await limited.http().get('/metrics').set('X-API-Key', TEST_API_KEY).expect(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      await limited.http().get('/metrics').set('Authorization', 'Bearer metrics-token-0123456789').expect(429);
      // ...and the admin API shares the bucket, so guesses cannot be split between the two.
      await limited.admin.get('/api/v1/admin/products').expect(429);
    } finally {
      await limited.close();
    }
  });
});
