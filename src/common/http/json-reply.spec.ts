import express, { type Express, type Request, type Response } from 'express';
import type { Server } from 'node:http';
import { rawAnswer } from '../../../test/support/raw-answer';
import { installJsonReply } from './json-reply';

const BODIES: unknown[] = [
  { status: 'ok' },
  { valid: true, status: 'active', expires_at: null, nested: { list: [1, 2.5, -0, 'x'], empty: {} } },
  { text: 'Grüße, 日本, emoji 🎉, quote " backslash \\ newline \n tab \t \u2028' },
  { long: 'x'.repeat(999) },
  { long: 'y'.repeat(1000) },
  { long: 'é'.repeat(700) },
  [],
  [{ a: 1 }, { b: [null, true, false] }],
  'a string',
  42,
  null,
  true,
  { date: new Date(0), skipped: undefined, fn: () => 1 },
  undefined,
];

/** The answers' variations: each is served by both apps and compared. */
const CASES: { name: string; method: string; status?: number; headers?: Record<string, string>; contentType?: string }[] = [
  { name: 'GET 200', method: 'GET' },
  { name: 'POST 201', method: 'POST', status: 201 },
  { name: 'POST 400', method: 'POST', status: 400 },
  { name: 'GET 404', method: 'GET', status: 404 },
  { name: 'HEAD', method: 'HEAD' },
  { name: 'GET 204', method: 'GET', status: 204 },
  { name: 'GET 205', method: 'GET', status: 205 },
  { name: 'GET 304', method: 'GET', status: 304 },
  { name: 'If-None-Match: *', method: 'GET', headers: { 'if-none-match': '*' } },
  { name: 'If-None-Match: an etag', method: 'GET', headers: { 'if-none-match': '"abc"' } },
  { name: 'If-Modified-Since', method: 'GET', headers: { 'if-modified-since': 'Thu, 01 Jan 2099 00:00:00 GMT' } },
  { name: 'Content-Type already set', method: 'GET', contentType: 'application/problem+json' },
];

function appWith(fast: boolean, settings: Record<string, unknown>): Express {
  const app = express();
  app.disable('x-powered-by');
  for (const [name, value] of Object.entries(settings)) app.set(name, value);
  if (fast) installJsonReply(app);
  app.all('/body/:index', (req: Request, res: Response) => {
    const variant = CASES[Number(req.query.case)];
    if (variant.status) res.status(variant.status);
    if (variant.contentType) res.setHeader('Content-Type', variant.contentType);
    res.setHeader('X-Before', 'kept');
    res.json(BODIES[Number(req.params.index)]);
  });
  return app;
}

const listen = (app: Express) =>
  new Promise<Server>((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });

/**
 * The seam over Express's `res.json` (docs/performance.md, Framework seams): for every body, status, method and
 * conditional header, an app with it installed answers exactly what Express alone answers. If Express changes what
 * its `json` sends, this fails instead of the API quietly answering differently.
 */
describe.each([
  ['as configureApp sets Express up (ETag off)', { etag: false }],
  ['with Express defaults (ETag on: the seam steps aside)', {}],
  ['with JSON spaces set (the seam steps aside)', { etag: false, 'json spaces': 2 }],
])('installJsonReply %s', (_name, settings) => {
  let control: Server;
  let fast: Server;
  beforeAll(async () => {
    control = await listen(appWith(false, settings));
    fast = await listen(appWith(true, settings));
  });
  afterAll(async () => {
    for (const server of [control, fast]) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it.each(CASES.map((c, i) => [c.name, i] as const))('answers %s exactly as Express does, for every body', async (_case, caseIndex) => {
    const variant = CASES[caseIndex];
    for (let index = 0; index < BODIES.length; index++) {
      const path = `/body/${index}?case=${caseIndex}`;
      const [expected, actual] = await Promise.all([
        rawAnswer(control, path, variant.method, variant.headers),
        rawAnswer(fast, path, variant.method, variant.headers),
      ]);
      expect({ index, ...actual }).toEqual({ index, ...expected });
    }
  });
});

describe('installJsonReply on the plain case', () => {
  it('sends JSON with its charset and length (the bytes the API documents)', async () => {
    const server = await listen(appWith(true, { etag: false }));
    try {
      const answer = await rawAnswer(server, '/body/2?case=0', 'GET');
      expect(answer.headers).toEqual(
        expect.arrayContaining(['Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(answer.body)}`]),
      );
      expect(JSON.parse(answer.body)).toEqual(BODIES[2]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
