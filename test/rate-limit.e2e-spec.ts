import { fingerprint, requestAuditCount } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const LIMITS = { activate: 10, deactivate: 10, validate: 60, heartbeat: 4, admin: 3, login: 5 };
const UNKNOWN_KEY = 'POS-00000-00000-00000-00000';
const seatBody = (extra: Record<string, unknown> = {}) => ({
  license_key: UNKNOWN_KEY,
  machine_fingerprint: fingerprint(),
  hostname: 'h',
  ...extra,
});

function expectRateLimited(
  res: { status: number; body: { error: { details: { retry_after_seconds: number } } }; headers: Record<string, string> },
  limit: number,
) {
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
  beforeAll(async () => (t = await createTestApp({ rateLimits: LIMITS })), 60_000);
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
  beforeAll(async () => (t = await createTestApp({ rateLimits: LIMITS, trustProxy: 'loopback' })), 60_000);
  afterAll(() => t.close());

  it('gives each forwarded client IP its own bucket', async () => {
    const as = (ip: string) => t.admin.get('/api/v1/admin/products').set('X-Forwarded-For', ip);
    for (let i = 0; i < 3; i++) await as('203.0.113.1').expect(200);
    expectRateLimited(await as('203.0.113.1'), 3);
    const other = await as('203.0.113.2').expect(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('2');
  });
});

describe('per-IP rate limits, client API (docs/client-api.md, Rate limits: 10 / 10 / 60 per minute)', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp({ rateLimits: LIMITS })), 60_000);
  afterAll(() => t.close());

  const post = (path: string, body: Record<string, unknown>, ip?: string) => {
    const req = t.http().post(path).send(body);
    return ip ? req.set('X-Forwarded-For', ip) : req;
  };

  it('the 11th activation within a minute is 429; rejected (400) requests count too, as guards run before validation', async () => {
    for (let i = 0; i < 7; i++) {
      const res = await post('/api/v1/activate', seatBody()).expect(400);
      expect(res.body.error.code).toBe('INVALID_KEY');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(10 - i - 1));
    }
    for (let i = 0; i < 3; i++)
      expect((await post('/api/v1/activate', { nonsense: true }).expect(400)).body.error.code).toBe('VALIDATION_ERROR');
    const audits = await requestAuditCount(t);
    expectRateLimited(await post('/api/v1/activate', seatBody()), 10);
    // A limited request never reaches the service: nothing is audited.
    expect(await requestAuditCount(t)).toEqual(audits);
  });

  it('a spoofed X-Forwarded-For does not open a new bucket without TRUST_PROXY', async () => {
    expectRateLimited(await post('/api/v1/activate', seatBody(), '198.51.100.23'), 10);
  });

  it('counts each endpoint in its own bucket: deactivate and validate still answer', async () => {
    expect((await post('/api/v1/deactivate', seatBody()).expect(400)).body.error.code).toBe('INVALID_KEY');
    const res = await post('/api/v1/validate', seatBody()).expect(400);
    expect(res.headers['x-ratelimit-limit']).toBe('60');
  });

  it('deactivate allows 10 per minute', async () => {
    for (let i = 0; i < 9; i++) await post('/api/v1/deactivate', seatBody()).expect(400);
    expectRateLimited(await post('/api/v1/deactivate', seatBody()), 10);
  });

  it('validate allows 60 per minute', async () => {
    for (let i = 0; i < 59; i++) await post('/api/v1/validate', seatBody()).expect(400);
    expectRateLimited(await post('/api/v1/validate', seatBody()), 60);
  });

  it('heartbeat has its own limit (RATE_LIMIT_HEARTBEAT), untouched by validate', async () => {
    for (let i = 0; i < 4; i++) expect((await post('/api/v1/heartbeat', seatBody()).expect(400)).body.error.code).toBe('INVALID_KEY');
    expectRateLimited(await post('/api/v1/heartbeat', seatBody()), 4);
  });
});

describe('per-IP rate limits, client API behind a trusted proxy', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp({ rateLimits: LIMITS, trustProxy: '1' })), 60_000);
  afterAll(() => t.close());

  const activateAs = (ip: string) => t.http().post('/api/v1/activate').set('X-Forwarded-For', ip).send(seatBody());

  it('another client IP is unaffected when one is limited', async () => {
    for (let i = 0; i < 10; i++) await activateAs('203.0.113.10').expect(400);
    expectRateLimited(await activateAs('203.0.113.10'), 10);
    const other = await activateAs('203.0.113.11').expect(400);
    expect(other.body.error.code).toBe('INVALID_KEY');
    expect(other.headers['x-ratelimit-remaining']).toBe('9');
  });

  it('with one trusted hop, only the address the proxy saw counts: a client-sent X-Forwarded-For entry cannot pick a bucket', async () => {
    // The proxy appends the real client (203.0.113.10, already limited) after whatever the client sent.
    expectRateLimited(await activateAs('10.9.9.9, 203.0.113.10'), 10);
  });
});

describe('per-IP rate limit of the store event routes (RATE_LIMIT_STORES; 600 per minute by default, 3 here)', () => {
  let t: TestApp;
  beforeAll(
    async () =>
      (t = await createTestApp({
        rateLimits: { ...LIMITS, stores: 3 },
        stores: { stripeWebhookSecret: 'whsec_rate_limit_0123456789', acceptTestEvents: false },
      })),
    60_000,
  );
  afterAll(() => t.close());

  it('unsigned requests count: the 4th within a minute is 429 before any signature is checked, with its own bucket', async () => {
    const post = () =>
      t.http().post('/api/v1/stores/stripe/events').set('Content-Type', 'application/json').set('Stripe-Signature', 't=1,v1=00').send('{}');
    for (let i = 0; i < 3; i++) expect((await post().expect(400)).body.error.code).toBe('INVALID_SIGNATURE');
    expectRateLimited(await post(), 3);
    // Another bucket: the admin API still answers.
    await t.admin.get('/api/v1/admin/products').expect(200);
  });
});
