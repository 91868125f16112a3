import { generateAdminToken } from '../src/auth/admin-token';
import { generateApiKey } from '../src/config/secrets';
import { generateLicenseKey } from '../src/licenses/license-key';
import { newWebhookSecret } from '../src/webhooks/webhooks.service';
import { createTestApp, TestApp } from './support/test-app';

interface RequestLogLine {
  level: number;
  msg: string;
  req?: { id: string; method: string; url: string; ip: string };
  res?: { statusCode: number | null };
  responseTime?: number;
}

/**
 * The request log line the real app writes (nestjs-pino's logger, as in production). One app for the file: nestjs-pino
 * builds its logger once per process, so the first app's destination and level are the file's.
 */
describe('request log', () => {
  let t: TestApp;
  const lines: RequestLogLine[] = [];
  beforeAll(
    async () =>
      (t = await createTestApp({ logLevel: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as RequestLogLine) })),
    60_000,
  );
  afterAll(() => t.close());

  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const lineOf = (id: string) => lines.find((l) => l.req?.id === id);

  // The request logger runs before everything else, so even a body the parser refuses gets a request id.
  it('gives a request id to a refused body (malformed JSON), echoing a well-formed one', async () => {
    const res = await t.http().post('/api/v1/validate').set('Content-Type', 'application/json').send('{"license_key":').expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await t
      .http()
      .post('/api/v1/validate')
      .set('Content-Type', 'application/json')
      .set('X-Request-Id', 'client-42')
      .send('[1,')
      .expect(400);
    expect(echoed.headers['x-request-id']).toBe('client-42');
    await settle();
    expect(lineOf('client-42')).toMatchObject({ res: { statusCode: 400 } });
  });

  it.each([
    ['GET', '/api/v1/health/live', 200, 30],
    ['GET', '/api/v1/no-such-route', 404, 40],
    ['POST', '/api/v1/validate', 400, 40],
  ] as const)(
    '%s %s: the line says res.statusCode %i, as its message does, with request id, client IP and duration',
    async (method, path, status, level) => {
      const id = `log-${status}`;
      const call = method === 'GET' ? t.http().get(path) : t.http().post(path).send({});
      await call.set('X-Request-Id', id).expect(status);
      await settle();
      const line = lineOf(id);
      expect(line).toMatchObject({ level, req: { id, method, url: path }, res: { statusCode: status } });
      expect(line?.msg).toMatch(new RegExp(`^${method} ${path} ${status} \\d+ms$`));
      expect(line?.req?.ip).toMatch(/127\.0\.0\.1|::1/);
      expect(typeof line?.responseTime).toBe('number');
    },
  );

  // docs/security.md, Review findings (round 3): the server's own credentials are masked by value, whatever they are called.
  it('masks API keys, admin tokens, webhook secrets and licence keys by value in query values, path segments and the request id', async () => {
    // From the generators, so a changed prefix cannot slip past the log.
    const apiKey = generateApiKey();
    const token = generateAdminToken();
    const secret = newWebhookSecret();
    const licenceKey = generateLicenseKey('POS');
    const cases: [string, string][] = [
      [`/api/v1/health/live?p=${apiKey}`, '/api/v1/health/live?p=[REDACTED]'],
      [`/api/v1/health/live?x=${encodeURIComponent(secret)}&y=1`, '/api/v1/health/live?x=[REDACTED]&y=1'],
      [`/api/v1/no-such-route/${token}`, '/api/v1/no-such-route/[REDACTED]'],
      [`/api/v1/no-such-route/${licenceKey.replace('-', '%2D')}`, '/api/v1/no-such-route/[REDACTED]'],
    ];
    for (const [i, [path, logged]] of cases.entries()) {
      await t.http().get(path).set('X-Request-Id', `by-value-${i}`);
      await settle();
      expect(lineOf(`by-value-${i}`)?.req?.url).toBe(logged);
    }
    const echoed = await t.http().get('/api/v1/health/live').set('X-Request-Id', token).expect(200);
    expect(echoed.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await settle();
    expect(lineOf(echoed.headers['x-request-id'])).toBeDefined();
    const all = JSON.stringify(lines);
    for (const value of [apiKey, token, secret, encodeURIComponent(secret)].map((v) => v.slice(8, 30)).concat(licenceKey.slice(4))) {
      expect(all).not.toContain(value);
    }
  });
});
