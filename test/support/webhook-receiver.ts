import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A local webhook receiver: records every request and answers with `respond` (default 200). Listens on
 * 127.0.0.1, so the app under test needs WEBHOOK_ALLOW_PRIVATE_NETWORKS (the test config sets it).
 */
export async function startReceiver(): Promise<{
  url: string;
  received: ReceivedWebhook[];
  respond: (handler: (hook: ReceivedWebhook, index: number) => number | Promise<number>) => void;
  waitFor: (count: number, predicate?: (hook: ReceivedWebhook) => boolean, timeoutMs?: number) => Promise<ReceivedWebhook[]>;
  close: () => Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  let handler: (hook: ReceivedWebhook, index: number) => number | Promise<number> = () => 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hook = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const index = received.push(hook) - 1;
      void Promise.resolve(handler(hook, index)).then((status) => {
        res.statusCode = status;
        res.end(status >= 400 ? 'receiver says no' : 'ok');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    respond: (next) => (handler = next),
    async waitFor(count, predicate = () => true, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = received.filter(predicate);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline) throw new Error(`receiver: ${matching.length} of ${count} webhooks after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
