import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolvedTarget } from './url-guard';
import { postOnce, ReceiverConnections } from './webhook-sender';

describe('webhook sender: kept-alive connections per vetted address', () => {
  let server: Server;
  let port: number;
  const seen: { remote: string; local: string; socket: number }[] = [];
  const sockets = new WeakMap<object, number>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (!sockets.has(req.socket)) sockets.set(req.socket, seen.length + 1);
      seen.push({
        remote: req.socket.remoteAddress ?? '',
        local: req.socket.localAddress ?? '',
        socket: sockets.get(req.socket) as number,
      });
      req.resume();
      req.on('end', () => {
        res.statusCode = 204;
        res.end();
      });
    });
    // Every loopback address (127.0.0.0/8) reaches a server bound to 0.0.0.0 on Linux.
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const target = (address: string): ResolvedTarget => ({ url: new URL(`http://receiver.example:${port}/hook`), address, family: 4 });

  it('reuses one connection for one origin and address, and opens another pool when the name resolves elsewhere', async () => {
    const connections = new ReceiverConnections(8);
    try {
      const first = target('127.0.0.1');
      for (let i = 0; i < 3; i++) {
        expect(await postOnce(first, { 'webhook-id': `msg_${i}` }, '{}', connections.agentFor(first))).toEqual({
          ok: true,
          statusCode: 204,
          error: null,
        });
      }
      const moved = target('127.0.0.2');
      expect((await postOnce(moved, { 'webhook-id': 'msg_moved' }, '{}', connections.agentFor(moved))).ok).toBe(true);
      expect(connections.agentFor(first)).not.toBe(connections.agentFor(moved));
      // The three requests to 127.0.0.1 shared a connection; the one to 127.0.0.2 went there, on its own.
      expect(seen.map((s) => s.local.replace(/^::ffff:/, ''))).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.2']);
      expect(new Set(seen.slice(0, 3).map((s) => s.socket)).size).toBe(1);
      expect(seen[3].socket).not.toBe(seen[0].socket);
    } finally {
      connections.closeAll();
    }
  });
});
