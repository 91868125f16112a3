import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import express, { type Express, type Request, type Response } from 'express';
import { rawAnswer } from '../../../test/support/raw-answer';
import { ExpressServerAdapter, requestClasses } from './express-server';

/** The same Host and client address from every server, so two servers' answers compare byte for byte. */
const raw = (server: Server, method: string, path: string) =>
  rawAnswer(server, path, method, { host: 'licences.example.test', 'x-forwarded-for': '203.0.113.9' });

const listen = (server: Server) => new Promise<Server>((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Routes that use Express's request and response methods, served alike by both apps. */
function routes(app: Express): Express {
  app.disable('x-powered-by');
  app.set('trust proxy', 1);
  app.get('/json', (req: Request, res: Response) => {
    res
      .status(201)
      .set('X-Host', req.get('host') ?? '')
      .json({ ip: req.ip, query: req.query, xhr: req.xhr, path: req.path });
  });
  app.get('/send', (_req: Request, res: Response) => res.type('text').send('Grüße'));
  app.get('/redirect', (_req: Request, res: Response) => res.redirect(303, '/json?a=1'));
  app.get('/cookie', (_req: Request, res: Response) => res.cookie('n', 'v', { httpOnly: true, path: '/' }).sendStatus(204));
  app.get('/throws', () => {
    throw new Error('refused');
  });
  return app;
}

describe('requestClasses and ExpressServerAdapter (docs/performance.md, Framework seams)', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const server of servers) await close(server);
  });
  const serve = async (server: Server) => {
    servers.push(server);
    return listen(server);
  };

  it("makes req and res from the app's own prototypes, so Express's per-request prototype change finds them in place", async () => {
    const app = routes(express());
    const server = await serve(createServer(requestClasses(app), app));
    const seen: { request: boolean; response: boolean; instances: boolean }[] = [];
    // Runs before Express's handler: what the server made, before anything could change it.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
      seen.push({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
        instances: req instanceof IncomingMessage && res instanceof ServerResponse,
      }),
    );
    const answer = await raw(server, 'GET', '/json?q=1');
    expect(answer.status).toBe(201);
    expect(seen).toEqual([{ request: true, response: true, instances: true }]);
    // Without the classes, Node makes them from its own prototypes and Express moves them.
    const plain = routes(express());
    const plainServer = await serve(createServer(plain));
    const before: boolean[] = [];
    plainServer.prependListener('request', (req: IncomingMessage) => before.push(Object.getPrototypeOf(req) === plain.request));
    await raw(plainServer, 'GET', '/json');
    expect(before).toEqual([false]);
  });

  it("answers byte for byte as Express's own app: JSON, text, redirect, cookie, 404 and an error", async () => {
    const ours = routes(express());
    const oursServer = await serve(createServer(requestClasses(ours), ours));
    const plain = routes(express());
    const plainServer = await serve(createServer(plain));
    for (const [method, path] of [
      ['GET', '/json?a=1&b=x'],
      ['HEAD', '/json'],
      ['GET', '/send'],
      ['GET', '/redirect'],
      ['GET', '/cookie'],
      ['GET', '/missing'],
      ['POST', '/json'],
      ['GET', '/throws'],
    ]) {
      const expected = await raw(plainServer, method, path);
      expect({ method, path, ...(await raw(oursServer, method, path)) }).toEqual({ method, path, ...expected });
    }
  });

  it("keeps each app's link: two apps' classes never share methods or the app they answer for", () => {
    const first = express();
    const second = express();
    requestClasses(first);
    requestClasses(second);
    expect((first.request as unknown as { app: Express }).app).toBe(first);
    expect((second.response as unknown as { app: Express }).app).toBe(second);
    expect(first.response).not.toBe(second.response);
  });

  it("the adapter's server makes them so; options this server never passes go to Nest's own server", async () => {
    const adapter = new ExpressServerAdapter();
    adapter.initHttpServer({});
    const app = adapter.getInstance<Express>();
    app.get('/ok', (_req: Request, res: Response) => res.json({ ok: true }));
    const server = await serve(adapter.getHttpServer());
    const seen: boolean[] = [];
    server.prependListener('request', (req: IncomingMessage) => seen.push(Object.getPrototypeOf(req) === app.request));
    expect((await raw(server, 'GET', '/ok')).body).toBe('{"ok":true}');
    expect(seen).toEqual([true]);

    const fallback = new ExpressServerAdapter();
    fallback.initHttpServer({ forceCloseConnections: true });
    const nestServer = await serve(fallback.getHttpServer());
    const fallbackSeen: boolean[] = [];
    nestServer.prependListener('request', (req: IncomingMessage) =>
      fallbackSeen.push(Object.getPrototypeOf(req) === IncomingMessage.prototype),
    );
    await raw(nestServer, 'GET', '/');
    expect(fallbackSeen).toEqual([true]);
  });
});
