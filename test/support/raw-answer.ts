import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a client receives, byte for byte but the Date header: for comparing two servers' answers. */
export interface RawAnswer {
  status: number;
  headers: string[];
  body: string;
}

/** One request on a connection of its own (`Connection: close` unless `headers` say otherwise), answered raw. */
export function rawAnswer(server: Server, path: string, method: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: { connection: 'close', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i].toLowerCase() !== 'date') pairs.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        }
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
