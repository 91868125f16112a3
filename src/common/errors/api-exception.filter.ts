import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError, ErrorBody } from './app-error';
import { isDatabaseUnavailable } from './database-errors';
import { ErrorCode } from './error-codes';

const STATUS_CODES: Record<number, ErrorCode> = {
  400: ErrorCode.VALIDATION_ERROR,
  401: ErrorCode.UNAUTHORIZED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  408: ErrorCode.REQUEST_TIMEOUT,
  409: ErrorCode.CONFLICT,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  431: ErrorCode.HEADERS_TOO_LARGE,
  429: ErrorCode.RATE_LIMITED,
  503: ErrorCode.SERVICE_UNAVAILABLE,
};

/** Turns any thrown value into its status and error body (docs/errors.md, Codes); never leaks a stack or SQL. */
export function toErrorResponse(exception: unknown): { status: number; body: ErrorBody; unexpected: boolean } {
  if (exception instanceof AppError) {
    return { status: exception.status, body: errorBody(exception.code, exception.message, exception.details), unexpected: false };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = STATUS_CODES[status] ?? (status >= 500 ? ErrorCode.INTERNAL_ERROR : ErrorCode.VALIDATION_ERROR);
    const message = status === 404 ? 'Route not found' : status >= 500 ? 'Internal server error' : httpMessage(exception);
    return { status, body: errorBody(code, message), unexpected: status >= 500 };
  }
  const bodyParserStatus = bodyParserErrorStatus(exception);
  if (bodyParserStatus) {
    const message =
      bodyParserStatus === 413
        ? 'Request body is larger than 64 KiB'
        : bodyParserStatus === 415
          ? 'Unsupported content encoding or charset'
          : isZlibError(exception)
            ? 'Request body could not be decompressed'
            : 'Request body is not valid JSON';
    const details = bodyParserStatus === 400 ? { fields: [{ field: 'body', message }] } : undefined;
    return { status: bodyParserStatus, body: errorBody(STATUS_CODES[bodyParserStatus], message, details), unexpected: false };
  }
  if (isDatabaseUnavailable(exception)) {
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      body: errorBody(ErrorCode.SERVICE_UNAVAILABLE, 'The database is unavailable; try again shortly'),
      unexpected: false,
    };
  }
  return { status: 500, body: errorBody(ErrorCode.INTERNAL_ERROR, 'Internal server error'), unexpected: true };
}

export function errorBody(code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  return details ? { error: { code, message, details } } : { error: { code, message } };
}

function httpMessage(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  return typeof message === 'string' ? message : exception.message;
}

// zlib (Z_DATA_ERROR, Z_BUF_ERROR) and brotli (ERR__ERROR_FORMAT_*) failures on a corrupt compressed body.
function isZlibError(exception: unknown): boolean {
  const code = (exception as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(Z_|ERR__)/.test(code);
}

/**
 * Errors raised by Express's body parser carry `type` and `status`; a body that fails to decompress
 * arrives as zlib's own error with only a `status` (it used to fall through to a 500).
 */
function bodyParserErrorStatus(exception: unknown): number | undefined {
  const e = exception as { type?: unknown; status?: unknown };
  if (!e || (typeof e.type !== 'string' && !isZlibError(e)) || typeof e.status !== 'number') return undefined;
  if (e.type === 'entity.too.large') return 413;
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return 415;
  if (e.status >= 400 && e.status < 500) return 400;
  return undefined;
}

export function logUnexpected(logger: Logger, exception: unknown, req: Request): void {
  const id = (req as { id?: unknown }).id;
  logger.error(`Unhandled error on ${req.method} ${req.path} (request ${String(id)}): ${(exception as Error)?.stack ?? String(exception)}`);
}

/** Global filter for the JSON API. The dashboard registers its own filter for HTML pages. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<Response>();
    const req = ctx.getRequest<Request>();
    const { status, body, unexpected } = toErrorResponse(exception);
    if (unexpected) logUnexpected(this.logger, exception, req);
    else if (status === 503) this.logger.warn(`Database unavailable on ${req.method} ${req.path}: ${(exception as Error)?.message}`);
    if (res.headersSent) return;
    // A 429 raised outside the rate-limit guard (the per-licence queue) gets the same Retry-After header.
    const retryAfter = body.error.details?.retry_after_seconds;
    if (status === 429 && typeof retryAfter === 'number' && !res.getHeader('Retry-After')) res.setHeader('Retry-After', String(retryAfter));
    res.status(status).json(body);
  }
}
