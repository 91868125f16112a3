import { createServer, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import { clientSocket, clientWithDeadline } from './deadline-client';

/**
 * The deadline reaches into pg's private `connection.stream` (docs/architecture.md, Database style): these fail when
 * a pg upgrade moves it, before a frozen database could hold requests forever again.
 */
describe('clientWithDeadline (the one reach into pg internals)', () => {
  let server: Server;
  let port: number;
  const sockets: Socket[] = [];
  const closed = new Set<Socket>();

  // A "database" that accepts the connection and never answers: the frozen server the deadline exists for.
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined).on('close', () => closed.add(socket));
      socket.resume(); // read and drop the startup message, so the client's close is seen
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => server.close(resolve));
  });

  it('finds the socket of a pg Client where pg keeps it', () => {
    const socket = clientSocket(new Client({ host: '127.0.0.1', port }));
    expect(socket).toBeDefined();
    expect(typeof socket?.destroy).toBe('function');
  });

  it('cuts the connection at the deadline: the query fails with ETIMEDOUT and the socket is closed', async () => {
    const DeadlineClient = clientWithDeadline(200);
    const client = new DeadlineClient({ host: '127.0.0.1', port, connectionTimeoutMillis: 60_000 });
    client.on('error', () => undefined);
    void client.connect().catch(() => undefined);
    // Once the client has written its startup message, queries queue behind the connection; the deadline still applies.
    const result = await (client.query('SELECT 1') as Promise<unknown>).then(
      () => 'answered',
      (err: { code?: string }) => err.code,
    );
    expect(result).toBe('ETIMEDOUT');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sockets).toHaveLength(1);
    expect(closed.has(sockets[0])).toBe(true);
  });
});
