import express from 'express';
import pino from 'pino';
import { Writable } from 'node:stream';
import request from 'supertest';
import { logLevelOf, maskSecrets, redactPath, redactQuery, requestIdOf, requestLogger } from './logging';

/** The fields of a request log line these tests read. */
interface LogLine {
  level: number;
  msg: string;
  responseTime: unknown;
  res: { statusCode: number };
  req: { url: string };
}

function appWithLog(level: string) {
  const lines: LogLine[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as LogLine), done()) });
  const app = express();
  app.use(requestLogger(pino({ level }, sink)));
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  app.get('/missing', (_req, res) => void res.status(404).json({}));
  app.get('/boom', (_req, res) => void res.status(500).json({}));
  return { app, lines };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('request log', () => {
  it('writes one line per request with id, method, masked path, status and duration', async () => {
    const { app, lines } = appWithLog('info');
    const res = await request(app).get('/ok?q=POS-ABCDE-FGHIJ-KLMNO-PQRST').set('X-Request-Id', 'req-1').expect(200);
    await settle();
    expect(res.headers['x-request-id']).toBe('req-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, req: { id: 'req-1', method: 'GET', url: '/ok?q=POS-*****' }, res: { statusCode: 200 } });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(lines[0].msg).toMatch(/^GET \/ok\?q=POS-\*\*\*\*\* 200 \d+ms$/);
    expect(JSON.stringify(lines[0])).not.toContain('ABCDE');
  });

  it('redacts the values of query parameters named like a key, token, secret, password, signature or nonce', async () => {
    const { app, lines } = appWithLog('info');
    const query =
      'api_key=k-123456&access_token=t-123456&client_secret=s-123456&password=p-123456&signature=RSA-SHA256%3Asig-123456&nonce=n-123456' +
      '&X-API-Key=h-123456&_csrf=c-123456&limit=5&q=kod+mike&status=active';
    await request(app).get(`/ok?${query}`).expect(200);
    await settle();
    const logged = JSON.stringify(lines[0]);
    // Values no request id (a random UUID, hex) can contain by chance: the line names the id too.
    for (const secret of ['k-123456', 't-123456', 's-123456', 'p-123456', 'sig-123456', 'n-123456', 'h-123456', 'c-123456']) {
      expect(logged).not.toContain(secret);
    }
    expect(lines[0].req.url).toBe(
      '/ok?api_key=[REDACTED]&access_token=[REDACTED]&client_secret=[REDACTED]&password=[REDACTED]&signature=[REDACTED]' +
        '&nonce=[REDACTED]&X-API-Key=[REDACTED]&_csrf=[REDACTED]&limit=5&q=kod+mike&status=active',
    );
  });

  it.each([
    ['/path', '/path'],
    ['/path?', '/path?'],
    ['/p?token', '/p?token'],
    ['/p?token=', '/p?token=[REDACTED]'],
    ['/p?%74oken=x', '/p?%74oken=[REDACTED]'],
    ['/p?bad%zz=x&secret=y', '/p?bad%zz=x&secret=[REDACTED]'],
    ['/p?a=1&a=2', '/p?a=1&a=2'],
  ])('redactQuery(%s) = %s', (url, expected) => expect(redactQuery(url)).toBe(expected));

  it('logs 4xx as warn and 5xx as error, and nothing below LOG_LEVEL', async () => {
    const { app, lines } = appWithLog('warn');
    await request(app).get('/ok').expect(200);
    await request(app).get('/missing').expect(404);
    await request(app).get('/boom').expect(500);
    await settle();
    expect(lines.map((l) => [l.level, l.res.statusCode])).toEqual([
      [40, 404],
      [50, 500],
    ]);
  });

  it('generates a UUID request id unless the client sent a sane one', () => {
    expect(requestIdOf('abc-123')).toBe('abc-123');
    expect(requestIdOf('bad id with spaces')).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdOf(['a', 'b'])).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdOf('x'.repeat(129))).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdOf(undefined)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('chooses the level from the status and whether the response finished', () => {
    expect(logLevelOf(200, true)).toBe('info');
    expect(logLevelOf(200, false)).toBe('warn');
    expect(logLevelOf(429, true)).toBe('warn');
    expect(logLevelOf(503, true)).toBe('error');
    expect(maskSecrets('/x/AB-12345-ABCDE-FGHIJ-KLMNO')).toBe('/x/AB-*****');
  });

  // Shaped as their generators make them; test/request-log.e2e-spec.ts takes them from the generators themselves.
  describe.each([
    ['an API key', 'lsk_kJ1x0Hc3yQ8bVq2mZr5tWn7pLs9dFg4hJk6aXc1vBn0'],
    ['an admin token', 'lst_Zr5tWn7pLs9dFg4hJk6aXc1vBn0kJ1x0Hc3yQ8bVq2m'],
    ['a webhook secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+/Ab9cD0eF1gH2i='],
    ['a signature', 'RSA-SHA256:' + 'A'.repeat(40)],
  ])('%s is redacted by its value', (_label, secret) => {
    const enc = encodeURIComponent(secret);
    const body = secret.slice(6, 30);

    it.each([
      [`/p?p=${enc}`, '/p?p=[REDACTED]'],
      [`/p?x=${enc}&limit=5`, '/p?x=[REDACTED]&limit=5'],
      [`/p?${enc}`, '/p?[REDACTED]'],
      [`/p?q=${encodeURIComponent(`note ${secret}`)}`, '/p?q=[REDACTED]'],
      [`/api/v1/admin/x/${enc}/y`, '/api/v1/admin/x/[REDACTED]/y'],
      // Percent-encoding the prefix does not hide it.
      [
        `/p?p=${[...secret.slice(0, 4)].map((c) => '%' + c.charCodeAt(0).toString(16)).join('')}${encodeURIComponent(secret.slice(4))}`,
        '/p?p=[REDACTED]',
      ],
    ])('%s -> %s', (url, expected) => {
      expect(maskSecrets(url)).toBe(expected);
      expect(maskSecrets(url)).not.toContain(body);
    });

    it('is never taken as the request id (which is logged and echoed)', () => {
      expect(requestIdOf(secret)).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  it('masks a licence key hidden by percent-encoding, and keeps values that only resemble a prefix', () => {
    const key = 'POS-ABCDE-FGHJK-MNPQR-STVWX';
    const hidden = key.replace('-', '%2D');
    expect(maskSecrets(`/p?q=${hidden}`)).toBe('/p?q=[REDACTED]');
    expect(redactPath(`/x/${hidden}`)).toBe('/x/[REDACTED]');
    expect(requestIdOf(key)).toMatch(/^[0-9a-f-]{36}$/);
    expect(maskSecrets('/p?q=blsk_x&name=whsec&status=active')).toBe('/p?q=blsk_x&name=whsec&status=active');
  });
});
