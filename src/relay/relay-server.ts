import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LeaseStore, StoredLease } from './lease-store';
import { checkPoolFor, Lease, Pool, signLease, verifyPoolFile } from './pool-file';
import { ensureDataDir, loadOrCreateKey, readVendorKeys, relayFingerprint, RelayIdentity } from './relay-identity';

/** How a relay is started (docs/relay.md, Configuration): flags or environment variables. */
export interface RelayConfig {
  dataDir: string;
  poolFile: string;
  vendorKeysFile: string;
  port: number;
  leaseSeconds: number;
  /** Requests per minute per IP and route. */
  rateLimit: number;
}

const FINGERPRINT = /^sha256:[0-9a-f]{64}$/i;
const MAX_BODY = 64 * 1024;
const MAX_HOSTNAME = 255;

/** The variables the relay reads (docs/relay.md, Configuration). */
export type RelayEnvironment = Partial<
  Record<'RELAY_DATA_DIR' | 'RELAY_POOL_FILE' | 'RELAY_VENDOR_KEYS' | 'PORT' | 'RELAY_LEASE_SECONDS' | 'RELAY_RATE_LIMIT', string>
>;

/** A refusal to start: one line, naming what is wrong. */
export class RelayStartError extends Error {}

/** Reads the configuration from flags (first) and the environment; a bad or missing value is a RelayStartError naming it. */
export function relayConfig(flags: { data?: string; pool?: string; vendorKeys?: string }, env: RelayEnvironment): RelayConfig {
  const required = (value: string | undefined, name: string) => {
    if (!value) throw new RelayStartError(`${name} is required`);
    return value;
  };
  const integer = (name: keyof RelayEnvironment, fallback: number, min: number, max: number) => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max) throw new RelayStartError(`${name} must be an integer from ${min} to ${max}`);
    return value;
  };
  return {
    dataDir: required(flags.data ?? env.RELAY_DATA_DIR, '--data or RELAY_DATA_DIR'),
    poolFile: required(flags.pool ?? env.RELAY_POOL_FILE, '--pool or RELAY_POOL_FILE'),
    vendorKeysFile: required(flags.vendorKeys ?? env.RELAY_VENDOR_KEYS, '--vendor-keys or RELAY_VENDOR_KEYS'),
    port: integer('PORT', 3000, 0, 65535),
    leaseSeconds: integer('RELAY_LEASE_SECONDS', 300, 10, 86400),
    rateLimit: integer('RELAY_RATE_LIMIT', 600, 1, 1_000_000),
  };
}

export interface RunningRelay {
  server: Server;
  port: number;
  pool: Pool;
  close: () => Promise<void>;
}

/**
 * Checks the pool (docs/relay.md, What the relay checks at start) and serves the relay API. Refuses, with a
 * RelayStartError, a pool whose envelope does not verify with the vendor's keys, whose `pool` is not the signed
 * payload, made for another machine or another relay key, or expired.
 */
export async function startRelay(config: RelayConfig, now = () => new Date()): Promise<RunningRelay> {
  const identity = withStartError(() => loadOrCreateKey(config.dataDir, false));
  const vendorKeys = withStartError(() => readVendorKeys(config.vendorKeysFile));
  const text = withStartError(() => readFileSync(config.poolFile, 'utf8'));
  const verified = verifyPoolFile(text, (id) => vendorKeys.get(id));
  if (!verified.ok) throw new RelayStartError(`pool file ${config.poolFile} refused: ${verified.message}`);
  const checked = checkPoolFor(verified.value.pool, relayFingerprint(), identity.keyId, now());
  if (!checked.ok) throw new RelayStartError(`pool file ${config.poolFile} refused: ${checked.message}`);
  const pool = checked.value;
  ensureDataDir(config.dataDir);
  const store = withStartError(() => LeaseStore.open(config.dataDir, pool.pool_id, pool.seats));
  const handler = relayHandler({ pool, poolFile: text, identity, store, config, now });
  const server = createServer((req, res) => void handler(req, res));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new RelayStartError(`cannot listen on port ${config.port}: ${err.message}`)));
    server.listen(config.port, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    pool,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        store.close();
      }),
  };
}

function withStartError<T>(make: () => T): T {
  try {
    return make();
  } catch (err) {
    throw err instanceof RelayStartError ? err : new RelayStartError((err as Error).message);
  }
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface HandlerContext {
  pool: Pool;
  poolFile: string;
  identity: RelayIdentity;
  store: LeaseStore;
  config: RelayConfig;
  now: () => Date;
}

type Route = (body: Record<string, unknown>) => Promise<{ status: number; body: unknown }>;

/** The relay API (docs/relay.md, The relay API): no credentials, a per-IP limit, errors as every JSON route of the server has them. */
function relayHandler(ctx: HandlerContext) {
  const { pool, store, config } = ctx;
  const limiter = new FixedWindowLimiter(config.rateLimit, 60_000);
  const leaseAnswer = (lease: StoredLease) => {
    const signed: Lease = {
      lease_id: lease.lease_id,
      pool_id: pool.pool_id,
      machine_fingerprint: lease.machine_fingerprint,
      issued_at: lease.issued_at,
      expires_at: lease.expires_at,
      heartbeat_interval_seconds: Math.floor(config.leaseSeconds / 3),
    };
    return { lease: signed, envelope: signLease(signed, ctx.identity.privateKey, ctx.identity.keyId), pool_file: ctx.poolFile };
  };
  const timesOrExpired = () => {
    const now = ctx.now();
    const poolEnd = Date.parse(pool.expires_at);
    if (now.getTime() >= poolEnd)
      throw new HttpError(400, 'KEY_EXPIRED', `The relay's pool expired at ${pool.expires_at}; the vendor must issue a new one`);
    return { now, expiresAt: new Date(Math.min(now.getTime() + config.leaseSeconds * 1000, poolEnd)) };
  };
  const routes: Record<string, Route> = {
    'POST /relay/v1/leases': async (body) => {
      const fingerprint = fingerprintOf(body);
      const hostname = hostnameOf(body);
      const { now, expiresAt } = timesOrExpired();
      const outcome = await store.lease(fingerprint, hostname, now, expiresAt);
      if (outcome.kind === 'full')
        throw new HttpError(400, 'ACTIVATION_LIMIT_REACHED', `Every seat of the pool is lent (${pool.seats})`, { seats: pool.seats });
      if (outcome.kind !== 'created' && outcome.kind !== 'renewed') throw new Error(`unexpected ${outcome.kind}`);
      return { status: outcome.kind === 'created' ? 201 : 200, body: leaseAnswer(outcome.lease) };
    },
    'POST /relay/v1/leases/heartbeat': async (body) => {
      const fingerprint = fingerprintOf(body);
      const { now, expiresAt } = timesOrExpired();
      const outcome = await store.heartbeat(fingerprint, now, expiresAt);
      if (outcome.kind !== 'renewed') throw notActivated();
      return { status: 200, body: leaseAnswer(outcome.lease) };
    },
    'POST /relay/v1/leases/release': async (body) => {
      const outcome = await store.release(fingerprintOf(body), ctx.now());
      if (outcome.kind !== 'released') throw notActivated();
      return { status: 200, body: { released: 1 } };
    },
    'GET /relay/v1/status': () =>
      Promise.resolve({
        status: 200,
        body: {
          pool_id: pool.pool_id,
          license_key: pool.license.license_key,
          seats: pool.seats,
          leased: store.live(ctx.now()).length,
          expires_at: pool.expires_at,
        },
      }),
  };
  return async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const path = (req.url ?? '/').split('?')[0];
      const route = routes[`${req.method} ${path}`];
      if (!route) throw new HttpError(404, 'NOT_FOUND', `No route ${req.method} ${path}`);
      const wait = limiter.hit(`${req.socket.remoteAddress ?? ''} ${path}`, Date.now());
      if (wait > 0) {
        res.setHeader('Retry-After', String(wait));
        throw new HttpError(429, 'RATE_LIMITED', `Too many requests; retry in ${wait} s`, { retry_after_seconds: wait });
      }
      const body = req.method === 'POST' ? await readJsonObject(req) : {};
      const answer = await route(body);
      send(res, answer.status, answer.body);
    } catch (err) {
      if (err instanceof HttpError) {
        send(res, err.status, { error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } });
        return;
      }
      console.error(`relay: ${req.method} ${req.url}: ${(err as Error).stack ?? String(err)}`);
      send(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Internal error' } });
    }
  };
}

const notActivated = () => new HttpError(400, 'NOT_ACTIVATED', 'This machine holds no live lease of the relay');

const invalid = (field: string, message: string) =>
  new HttpError(400, 'VALIDATION_ERROR', 'Request validation failed', { fields: [{ field, message }] });

function fingerprintOf(body: Record<string, unknown>): string {
  const value = body.machine_fingerprint;
  if (typeof value !== 'string' || !FINGERPRINT.test(value))
    throw invalid('machine_fingerprint', 'machine_fingerprint must match ^sha256:[0-9a-f]{64}$');
  return value.toLowerCase();
}

function hostnameOf(body: Record<string, unknown>): string | null {
  const value = body.hostname;
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || [...value].length > MAX_HOSTNAME || value.includes('\0') || !value.isWellFormed())
    throw invalid('hostname', `hostname must be text of at most ${MAX_HOSTNAME} characters`);
  return value;
}

/** The body as a JSON object: at most 64 KiB (413), valid UTF-8 JSON (400 naming `body`). */
async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, 'PAYLOAD_TOO_LARGE', `The body is over ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
  } catch {
    throw invalid('body', 'the body must be a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('body', 'the body must be a JSON object');
  return value as Record<string, unknown>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

/** A fixed window per key (section "Rate limits" of docs/relay.md): returns 0 when allowed, else the seconds to wait. */
class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  hit(key: string, now: number): number {
    let window = this.windows.get(key);
    if (!window || now - window.start >= this.windowMs) {
      if (this.windows.size > 10_000) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return window.count > this.limit ? Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000)) : 0;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
  }
}
