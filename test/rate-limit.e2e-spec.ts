import { createTestApp, TestApp } from './support/test-app';

const LIMITS = { activate: 10, deactivate: 10, validate: 60, admin: 3, login: 5 };

function expectRateLimited(res: { status: number; body: any; headers: Record<string, string> }, limit: number) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: { code: 'RATE_LIMITED', message: expect.any(String), details: { retry_after_seconds: expect.any(Number) } },
  });
  const retry = res.body.error.details.retry_after_seconds;
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);
  expect(res.headers['retry-after']).toBe(String(retry));
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expect(Number(res.headers['x-ratelimit-reset'])).toBe(retry);
}

describe('per-IP rate limits, admin API', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp({ rateLimits: LIMITS })));
  afterAll(() => t.close());

  it('limits the whole admin API per IP (600/min by default; 3 here), counting requests with a wrong key too', async () => {
    const first = await t.admin.get('/api/v1/admin/products').expect(200);
    expect(first.headers['x-ratelimit-limit']).toBe('3');
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    expect(first.headers['retry-after']).toBeUndefined();
    await t.http().get('/api/v1/admin/products').set('X-API-Key', 'wrong').expect(401);
    await t.admin.get('/api/v1/admin/products/1').expect(200);
    expectRateLimited(await t.admin.get('/api/v1/admin/products'), 3);
    expectRateLimited(await t.http().get('/api/v1/admin/products').set('X-API-Key', 'guess'), 3);
  });

  it('does not limit routes that did not opt in', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.http().get('/api/v1/public-key').expect(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('ignores a spoofed X-Forwarded-For when TRUST_PROXY is unset: still the same bucket', async () => {
    const res = await t.admin.get('/api/v1/admin/products').set('X-Forwarded-For', '198.51.100.77');
    expectRateLimited(res, 3);
  });
});

describe('per-IP rate limits behind a trusted proxy (TRUST_PROXY=loopback)', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp({ rateLimits: LIMITS, trustProxy: 'loopback' })));
  afterAll(() => t.close());

  it('gives each forwarded client IP its own bucket', async () => {
    const as = (ip: string) => t.admin.get('/api/v1/admin/products').set('X-Forwarded-For', ip);
    for (let i = 0; i < 3; i++) await as('203.0.113.1').expect(200);
    expectRateLimited(await as('203.0.113.1'), 3);
    const other = await as('203.0.113.2').expect(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('2');
  });
});
