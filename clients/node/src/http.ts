import { LicenseServerError, NetworkError } from './errors.js';

export interface HttpOptions {
  serverUrl: string;
  timeoutMs: number;
  retries: number;
  fetch: typeof fetch;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * JSON over HTTP with the server's error model. `idempotent` requests are retried on network errors, 429 and
 * 502-504, honouring Retry-After (capped), with exponential backoff; other requests are sent once.
 */
export async function requestJson<T>(
  options: HttpOptions,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  idempotent: boolean,
): Promise<T> {
  const attempts = idempotent ? options.retries + 1 : 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return await once<T>(options, method, path, body);
    } catch (err) {
      const retryable = err instanceof NetworkError || (err instanceof LicenseServerError && RETRYABLE_STATUS.has(err.status));
      if (!retryable || attempt >= attempts) throw err;
      const retryAfter = err instanceof LicenseServerError ? Number(err.details.retry_after_seconds) : NaN;
      const backoff = Number.isFinite(retryAfter) ? Math.min(retryAfter * 1000, 30_000) : 500 * 2 ** (attempt - 1);
      await sleep(backoff * (0.8 + Math.random() * 0.4));
    }
  }
}

async function once<T>(options: HttpOptions, method: string, path: string, body: unknown): Promise<T> {
  const url = endpoint(options.serverUrl, path);
  let response: Response;
  try {
    response = await options.fetch(url, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new NetworkError(`${method} ${url.pathname}: ${cause ?? (err as Error).message}`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch (err) {
    throw new NetworkError(`${method} ${url.pathname}: answer ${response.status} is not JSON`, { cause: err });
  }
  if (response.ok) return parsed as T;
  const error = (parsed as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error;
  if (typeof error?.code !== 'string') throw new NetworkError(`${method} ${url.pathname}: answer ${response.status} without an error body`);
  const details = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : {};
  const retryAfter = response.headers.get('retry-after');
  if (retryAfter !== null && details.retry_after_seconds === undefined) details.retry_after_seconds = Number(retryAfter);
  throw new LicenseServerError(error.code, response.status, String(error.message ?? error.code), details);
}

/** `path` under the server's base URL, keeping a base path (`https://vendor.example/licensing` + `/api/v1/x`). */
export function endpoint(serverUrl: string, path: string): URL {
  const base = new URL(serverUrl);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  return new URL(path.replace(/^\/+/, ''), base);
}
