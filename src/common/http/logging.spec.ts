import express from 'express';
import pino from 'pino';
import { Writable } from 'node:stream';
import request from 'supertest';
import { logLevelOf, maskSecrets, requestIdOf, requestLogger } from './logging';

function appWithLog(level: string) {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
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
    const res = await request(app).get('/ok?key=POS-ABCDE-FGHIJ-KLMNO-PQRST').set('X-Request-Id', 'req-1').expect(200);
    await settle();
    expect(res.headers['x-request-id']).toBe('req-1');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, req: { id: 'req-1', method: 'GET', url: '/ok?key=POS-*****' }, res: { statusCode: 200 } });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(lines[0].msg).toMatch(/^GET \/ok\?key=POS-\*\*\*\*\* 200 \d+ms$/);
    expect(JSON.stringify(lines[0])).not.toContain('ABCDE');
  });

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
});
