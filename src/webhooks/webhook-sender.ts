import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, ResolvedTarget } from './url-guard';

export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A receiver's answer is read up to this many bytes (kept for the delivery's last_error), never more. */
const MAX_RESPONSE_BYTES = 4096;
/** An idle kept-alive connection is closed after this (below Node's and most servers' 5 s keep-alive timeout). */
const IDLE_SOCKET_MS = 4_000;
/** Receivers whose connections are kept; the least recently used one's are closed beyond this. */
const MAX_RECEIVERS = 256;

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/**
 * Kept-alive connections to receivers (docs/webhooks.md, Delivery, retries and "at least once"): one connection pool
 * per URL origin and vetted address, so a connection only ever goes to the address that was checked; when the name
 * resolves elsewhere, the new address gets a pool of its own. At most `maxSockets` connections per pool (the drain
 * bounds the requests per endpoint to the same number).
 */
export class ReceiverConnections {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxSockets: number) {}

  agentFor(target: ResolvedTarget): http.Agent {
    const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
    let agent = this.agents.get(key);
    if (agent)
      this.agents.delete(key); // re-inserted last: the Map's order is the least recently used first
    else {
      const options = { keepAlive: true, maxSockets: this.maxSockets, maxFreeSockets: this.maxSockets, timeout: IDLE_SOCKET_MS };
      agent = target.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    }
    this.agents.set(key, agent);
    for (const [oldest, old] of this.agents) {
      if (this.agents.size <= MAX_RECEIVERS) break;
      old.destroy();
      this.agents.delete(oldest);
    }
    return agent;
  }

  /** Closes every kept connection (at shutdown). */
  closeAll(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/**
 * One POST to the vetted address (TLS still checks the URL's host name), no redirects followed, 10 s for the whole
 * exchange, the answer read up to 4 KiB. A 2xx is a success; anything else, a timeout or a network error is not.
 * With `agent`, the connection is a kept-alive one of that pool (ReceiverConnections.agentFor(target)); a kept
 * connection the receiver closed just as it was reused is replaced once by a new one (nothing was received on it).
 */
export async function postOnce(
  target: ResolvedTarget,
  headers: Record<string, string>,
  body: string,
  agent: http.Agent | false = false,
): Promise<AttemptResult> {
  const deadline = Date.now() + ATTEMPT_TIMEOUT_MS;
  const first = await requestOnce(target, headers, body, agent, deadline);
  return first.staleConnection ? (await requestOnce(target, headers, body, agent, deadline)).result : first.result;
}

function requestOnce(
  target: ResolvedTarget,
  headers: Record<string, string>,
  body: string,
  agent: http.Agent | false,
  deadline: number,
): Promise<{ result: AttemptResult; staleConnection?: boolean }> {
  return new Promise((resolve) => {
    const client = target.url.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (result: AttemptResult, staleConnection = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ result, staleConnection });
    };
    const req = client.request(
      target.url,
      {
        method: 'POST',
        lookup: pinnedLookup(target),
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'licence-server-webhooks/1',
        },
        agent,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let received = 0;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (received < MAX_RESPONSE_BYTES) chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - received));
          received += chunk.length;
          // Past 4 KiB the connection is not worth keeping: destroyed, not drained.
          if (received >= MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () => {
          const ok = status >= 200 && status < 300;
          const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim();
          finish({ ok, statusCode: status, error: ok ? null : `HTTP ${status}${text ? `: ${text.slice(0, 300)}` : ''}` });
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(
      () => {
        req.destroy();
        finish({ ok: false, statusCode: null, error: `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` });
      },
      Math.max(0, deadline - Date.now()),
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      // Node's advice for kept-alive connections: a reused one reset before any answer was closed by the receiver
      // while idle, so the request almost surely never reached it (and a repeat has the same webhook-id).
      const stale = req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
      finish({ ok: false, statusCode: null, error: err.message.slice(0, 300) }, stale);
    });
    req.end(body);
  });
}
