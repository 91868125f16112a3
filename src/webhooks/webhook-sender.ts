import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, ResolvedTarget } from './url-guard';

export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A receiver's answer is read up to this many bytes (kept for the delivery's last_error), never more. */
const MAX_RESPONSE_BYTES = 4096;

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/**
 * One POST to the vetted address (TLS still checks the URL's host name), no redirects followed, 10 s for the whole
 * exchange, the answer read up to 4 KiB. A 2xx is a success; anything else, a timeout or a network error is not.
 */
export function postOnce(target: ResolvedTarget, headers: Record<string, string>, body: string): Promise<AttemptResult> {
  return new Promise((resolve) => {
    const client = target.url.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
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
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let received = 0;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (received < MAX_RESPONSE_BYTES) chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - received));
          received += chunk.length;
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
    const timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, statusCode: null, error: `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` });
    }, ATTEMPT_TIMEOUT_MS);
    req.on('error', (err) => finish({ ok: false, statusCode: null, error: err.message.slice(0, 300) }));
    req.end(body);
  });
}
