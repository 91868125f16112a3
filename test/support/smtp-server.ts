import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A message as the in-process SMTP server took it: the envelope, the raw text and mailparser's reading of it. */
export interface ReceivedMail {
  envelopeTo: string[];
  raw: string;
  parsed: ParsedMail;
}

/** Answers RCPT TO for `address` (its `n`th try): an SMTP code to refuse with, or undefined to accept. */
type RcptPolicy = (address: string, n: number) => number | undefined;

/** A real SMTP server in the test process (no TLS, no auth) that keeps what it accepted (docs/testing.md). */
export async function startSmtpServer() {
  const received: ReceivedMail[] = [];
  const tries = new Map<string, number>();
  let policy: RcptPolicy = () => undefined;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      const n = (tries.get(address.address) ?? 0) + 1;
      tries.set(address.address, n);
      const code = policy(address.address, n);
      if (code) return callback(Object.assign(new Error(`refused by the test server (${code})`), { responseCode: code }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then((parsed) => {
            received.push({ envelopeTo: session.envelope.rcptTo.map((r) => r.address), raw: raw.toString('utf8'), parsed });
            callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    tries,
    respond(next: RcptPolicy) {
      policy = next;
    },
    async waitFor(count: number, match: (m: ReceivedMail) => boolean = () => true, timeoutMs = 30_000): Promise<ReceivedMail[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.filter(match);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`expected ${count} messages, got ${found.length} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
