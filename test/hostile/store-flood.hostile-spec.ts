import { createHmac } from 'node:crypto';
import { embeddedServer, EmbeddedServer } from './support/embedded-server';
import { jsonRequest, RawResponse, send } from './support/raw-http';

/**
 * Bounded cost before authentication (docs/security.md, Store signatures cost one HMAC): a 1 MiB Paddle body whose
 * Paddle-Signature repeats `h1=0` 3,000 times cost one HMAC per candidate (5.6 s on a 2-core machine, and a /validate
 * sent meanwhile waited as long). The built server, started from environment variables only, answers it 400 in under
 * 100 ms, and a /validate sent at the same moment is not held up by more than 100 ms.
 */
const SECRET = 'pdl_ntfset_hostile_0123456789abcdef';
const ROUNDS = 5;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe('store routes: bounded cost before authentication (built server)', () => {
  let s: EmbeddedServer;
  // 1 MiB of JSON, the most a store route reads.
  const body = Buffer.from(
    JSON.stringify({ event_id: 'evt_flood', event_type: 'transaction.completed', data: { pad: 'x'.repeat(1024 * 1024 - 120) } }),
  );
  const flood = () => ({
    method: 'POST',
    path: '/api/v1/stores/paddle/events',
    headers: [
      ['Content-Type', 'application/json'],
      ['Paddle-Signature', `ts=${Math.floor(Date.now() / 1000)};${Array(3000).fill('h1=0').join(';')}`],
    ] as [string, string][],
    body,
  });
  const validate = () =>
    send(
      s.server.port,
      jsonRequest('POST', '/api/v1/validate', { license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: 'f'.repeat(32) }),
    );

  beforeAll(async () => {
    s = await embeddedServer({ PADDLE_WEBHOOK_SECRET: SECRET });
  }, 120_000);
  afterAll(() => s?.cleanup(), 60_000);

  it('the body is the size the issue measured (1 MiB) and the route is on (a correctly signed copy is read, not refused)', async () => {
    expect(body.length).toBeGreaterThan(1024 * 1024 - 200);
    expect(body.length).toBeLessThanOrEqual(1024 * 1024);
    const ts = Math.floor(Date.now() / 1000);
    const h1 = createHmac('sha256', SECRET).update(`${ts}:`).update(body).digest('hex');
    const signed = await send(s.server.port, {
      method: 'POST',
      path: '/api/v1/stores/paddle/events',
      headers: [
        ['Content-Type', 'application/json'],
        ['Paddle-Signature', `ts=${ts};h1=${h1}`],
      ],
      body,
    });
    // Signed but no Paddle event (no occurred_at): past the signature, refused as a body.
    expect(signed.status).toBe(400);
    expect((signed.json as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
  });

  it('3,000 h1 candidates over 1 MiB: 400 INVALID_SIGNATURE in under 100 ms; a /validate sent meanwhile is not delayed by more than 100 ms', async () => {
    // Warm both paths (first requests compile code) and measure /validate alone.
    await send(s.server.port, flood());
    const alone: number[] = [];
    for (let i = 0; i < ROUNDS; i++) alone.push((await validate()).ms);

    const floods: RawResponse[] = [];
    const during: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [attack, check] = await Promise.all([send(s.server.port, flood()), validate()]);
      floods.push(attack);
      during.push(check.ms);
    }
    for (const attack of floods) {
      expect(attack.status).toBe(400);
      expect((attack.json as { error: { code: string } }).error.code).toBe('INVALID_SIGNATURE');
    }
    const floodMs = median(floods.map((r) => r.ms));
    const delay = median(during) - median(alone);
    // The medians of five rounds: one scheduling hiccup of a shared machine is not the server's cost.
    expect(floodMs).toBeLessThan(100);
    expect(delay).toBeLessThan(100);
  });

  it('store routes have their own per-IP limit (RATE_LIMIT_STORES, default 600 per minute)', async () => {
    const res = await send(s.server.port, { ...flood(), body: Buffer.from('{}') });
    expect(res.headers['x-ratelimit-limit']).toEqual(['600']);
  });
});
