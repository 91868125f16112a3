import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from '../errors/api-exception.filter';
import { AppError } from '../errors/app-error';
import { ErrorCode } from '../errors/error-codes';

/** How long a refused upload may keep sending (discarded) after its 413, so the client reads the answer instead of a reset. */
export const REFUSED_UPLOAD_LINGER_MS = 2000;

/**
 * A declared Content-Length over the limit is refused at once. body-parser would also answer 413, but only
 * after reading (and discarding) the whole announced body: a client announcing 1 GB and sending 2 bytes
 * held its connection open without an answer until Node's request timeout.
 */
export function refuseDeclaredOversize(limitBytes: number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const declared = Number(req.headers['content-length']);
    if (!(declared > limitBytes)) return next();
    res.setHeader('Connection', 'close');
    req.resume();
    res.once('finish', () => setTimeout(() => req.socket.destroy(), REFUSED_UPLOAD_LINGER_MS).unref());
    // Rendered by the body-parser error handler, exactly as body-parser's own 413.
    next(
      Object.assign(new Error('request entity too large'), {
        type: 'entity.too.large',
        status: 413,
        expected: declared,
        limit: limitBytes,
      }),
    );
  };
}

const PARSER_ERRORS: Record<string, { status: number; code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: ErrorCode.HEADERS_TOO_LARGE,
    message: 'Request line and headers are larger than the server accepts',
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: ErrorCode.PAYLOAD_TOO_LARGE, message: 'Chunk extensions are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: ErrorCode.REQUEST_TIMEOUT, message: 'The request was not received in time' },
};
const MALFORMED = { status: 400, code: ErrorCode.VALIDATION_ERROR, message: 'Malformed HTTP request' };

// What `app.use('/api/v1', ...)` matched: the prefix as a whole segment, case-insensitively (Express's default routing).
const API_PATH = /^\/api\/v1(?:\/|$)/i;

/** The JSON API's paths: the only ones that take `no-store` and the JSON-only body rule, and none of the dashboard's work. */
export const isApiPath = (path: string): boolean => API_PATH.test(path);

/** `handler` on API paths only, as one cheap path test instead of a mounted router layer. */
export const onApiPaths =
  (handler: RequestHandler): RequestHandler =>
  (req, res, next) =>
    isApiPath(req.path) ? handler(req, res, next) : next();

/** API answers carry customer data, keys and signed licences: never kept by a browser or a proxy cache. */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  next();
}

/**
 * The JSON API reads JSON bodies only. A form or text/plain body is what any web page can make a visitor's browser
 * send without a CORS preflight; refusing it (415) before parsing keeps such requests from reaching a route.
 * A request without a body (or an empty one) passes whatever its Content-Type.
 */
export function requireJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;
  if (!hasBody || req.is('application/json')) return next();
  req.resume();
  next(new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415, 'The request body must be JSON (Content-Type: application/json)'));
}

/** HTTP/1.1 requires Host; Node's own check answers with an empty 400, so it is made here (see hardenHttpServer). */
export function requireHostHeader(req: Request, _res: Response, next: NextFunction): void {
  if (req.httpVersion === '1.1' && !req.headers.host) return next(AppError.field('host', 'HTTP/1.1 requests need a Host header'));
  next();
}

/**
 * Requests Node's HTTP parser refuses (oversized headers, invalid characters, Transfer-Encoding together
 * with Content-Length) never reach Express; Node answered them with an empty 400/431. Answer with
 * the error body instead (docs/errors.md, Body), with the same care as Node: only when no response is under way.
 * Node's missing-Host check has no such hook: it is switched off and `requireHostHeader` does it instead.
 */
export function hardenHttpServer(server: Server): void {
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, code, message } = PARSER_ERRORS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify(errorBody(code, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n' +
        body,
    );
  });
}
