import { connect } from 'node:net';

/** A response as the bytes on the wire said it: no client library normalising anything. */
export interface RawResponse {
  status: number;
  /** Lower-cased names; a repeated header keeps every value. */
  headers: Record<string, string[]>;
  body: string;
  /** The parsed body when it was JSON, else undefined. */
  json: unknown;
  ms: number;
}

export interface RawRequest {
  method: string;
  path: string;
  /** Sent as given, in order, duplicates included. */
  headers?: [string, string][];
  body?: string | Buffer;
  /** Content-Length is added for a body unless a header list already has one (or Transfer-Encoding). */
  autoLength?: boolean;
  /** Leave out the Host header (HTTP/1.1 requires it). */
  noHost?: boolean;
}

/** Per-request ceiling: a request still unanswered after this is a hang, and the test fails on it. */
export const REQUEST_TIMEOUT_MS = 10_000;

export class RequestTimeout extends Error {}

/** Serialises a request to HTTP/1.1 bytes with `Connection: close`. */
export function requestBytes(req: RawRequest, host: string): Buffer {
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  const headers: [string, string][] = [
    ...(req.noHost ? [] : ([['Host', host]] as [string, string][])),
    ['Connection', 'close'],
    ...(req.headers ?? []),
  ];
  const has = (name: string) => headers.some(([n]) => n.toLowerCase() === name);
  if (body && req.autoLength !== false && !has('content-length') && !has('transfer-encoding'))
    headers.push(['Content-Length', String(body.length)]);
  const head = `${req.method} ${req.path} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}`).join('\r\n')}\r\n\r\n`;
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
}

/** Sends bytes to 127.0.0.1:port and reads the whole response (the server closes the connection). */
export function sendRaw(port: number, bytes: Buffer, timeoutMs = REQUEST_TIMEOUT_MS): Promise<RawResponse> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      fn();
    };
    const timer = setTimeout(() => finish(() => reject(new RequestTimeout(`no complete response within ${timeoutMs} ms`))), timeoutMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      // A complete response ends the exchange even if the server keeps the socket open.
      const parsed = tryParse(Buffer.concat(chunks), Date.now() - started);
      if (parsed) finish(() => resolve(parsed));
    });
    // The server may close while we are still writing a body it refused (413): the answer is what counts.
    socket.on('error', (err) => {
      const parsed = tryParse(Buffer.concat(chunks), Date.now() - started);
      finish(() => (parsed ? resolve(parsed) : reject(err)));
    });
    socket.on('end', () => {
      const parsed = tryParse(Buffer.concat(chunks), Date.now() - started, true);
      finish(() =>
        parsed
          ? resolve(parsed)
          : reject(
              new Error(
                `connection closed without a complete response: ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(0, 300))}`,
              ),
            ),
      );
    });
    socket.write(bytes);
  });
}

export const send = (port: number, req: RawRequest, timeoutMs?: number) => sendRaw(port, requestBytes(req, `127.0.0.1:${port}`), timeoutMs);

/** Parses a complete HTTP/1.1 response; undefined while bytes are missing. */
function tryParse(buf: Buffer, ms: number, closed = false): RawResponse | undefined {
  // Interim answers (100 Continue) come before the real one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(buf.subarray(0, 13).toString('latin1')) && buf.indexOf('\r\n\r\n') >= 0)
    buf = buf.subarray(buf.indexOf('\r\n\r\n') + 4);
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
  if (!status) throw new Error(`not an HTTP response: ${lines[0]}`);
  const headers: Record<string, string[]> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(i + 1).trim());
  }
  const rest = buf.subarray(end + 4);
  let body: Buffer;
  if (headers['transfer-encoding']?.[0]?.toLowerCase() === 'chunked') {
    const decoded = decodeChunked(rest);
    if (!decoded) return undefined;
    body = decoded;
  } else if (headers['content-length']) {
    const length = Number(headers['content-length'][0]);
    if (rest.length < length) return undefined;
    body = rest.subarray(0, length);
  } else {
    if (!closed) return undefined;
    body = rest;
  }
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status, headers, body: text, json, ms };
}

function decodeChunked(buf: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** A JSON request with the usual headers; `raw` bodies are sent verbatim (for raw JSON escapes such as "\ud800"). */
export function jsonRequest(method: string, path: string, body?: unknown, extraHeaders: [string, string][] = [], raw = false): RawRequest {
  const headers: [string, string][] = [...extraHeaders];
  if (body !== undefined && !headers.some(([n]) => n.toLowerCase() === 'content-type'))
    headers.unshift(['Content-Type', 'application/json']);
  return { method, path, headers, body: body === undefined ? undefined : raw ? (body as string) : JSON.stringify(body) };
}
