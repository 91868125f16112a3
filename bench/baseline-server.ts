import canonicalize from 'canonicalize';
import cluster from 'node:cluster';
import { createPrivateKey, createPublicKey, createHash, KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'pg';
import { toError } from '../src/common/errors/to-error';

/**
 * The benchmark's baseline: a bare node:http server (no framework) doing the minimum of the
 * licence server's work, run as its own process like the real server.
 *   GET /health            answer JSON, nothing else
 *   POST /validate         parse the body, one indexed SELECT by key through a pg pool, answer JSON
 *   POST /validate-signed  the same SELECT, then sign the canonical answer carrying the nonce (docs/client-api.md, Signed validation)
 *   POST /activate         parse the body, one locked write of the seat row `seat_id` named in the body (UPDATE ...
 *                          WHERE id = ... RETURNING: one row lock, one WAL flush), then sign the canonical licence
 *                          payload with a cached KeyObject (async)
 *   POST /heartbeat        parse the body, one UPDATE of the seat's last_seen_at joined to its licence by key, answer JSON
 * Environment: PORT, DATABASE_URL, SIGNING_KEY_FILE, DB_POOL_SIZE, WEB_CONCURRENCY (that many node:cluster workers
 * sharing the port, as the server runs them; each with its own pool).
 */
type Body = Record<string, string>;
type Handler = (body: Body) => Promise<[number, unknown]>;

function readJson(req: IncomingMessage): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body);
      } catch (err) {
        reject(toError(err));
      }
    });
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/** `RSA-SHA256:` + base64 of the signature over the canonical JSON (RFC 8785), computed off the event loop. */
async function signCanonical(value: unknown, privateKey: KeyObject): Promise<string> {
  const data = Buffer.from(canonicalize(value) as string, 'utf8');
  const signature = await new Promise<Buffer>((resolve, reject) =>
    sign('sha256', data, privateKey, (err, sig) => (err ? reject(err) : resolve(sig))),
  );
  return `RSA-SHA256:${signature.toString('base64')}`;
}

function routes(pool: Pool, privateKey: KeyObject): Record<string, Handler> {
  const keyId = createHash('sha256')
    .update(createPublicKey(privateKey).export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
  const issuedAt = new Date().toISOString();

  const check = async (body: Body) => {
    const { rows } = await pool.query<{ id: number; expires_at: Date | null; revoked: boolean; active: boolean; grace_days: number }>(
      'SELECT id, expires_at, revoked, active, grace_days FROM licenses WHERE license_key = $1',
      [body.license_key],
    );
    if (rows.length === 0) return undefined;
    const l = rows[0];
    return {
      valid: l.active && !l.revoked,
      status: 'active',
      expires_at: l.expires_at,
      revoked: l.revoked,
      grace_ends_at: null,
      code: null,
    };
  };
  const invalidKey: [number, unknown] = [400, { error: { code: 'INVALID_KEY', message: 'The licence key does not exist' } }];

  return {
    '/validate': async (body) => {
      const answer = await check(body);
      return answer ? [200, answer] : invalidKey;
    },
    '/validate-signed': async (body) => {
      const answer = await check(body);
      if (!answer) return invalidKey;
      const signed = {
        ...answer,
        nonce: body.nonce,
        license_key: body.license_key,
        machine_fingerprint: body.machine_fingerprint,
        checked_at: new Date().toISOString(),
        key_id: keyId,
      };
      return [200, { ...signed, signature: await signCanonical(signed, privateKey) }];
    },
    '/heartbeat': async (body) => {
      const { rows } = await pool.query<{ last_seen_at: Date; active: boolean; revoked: boolean }>(
        `UPDATE activations s SET last_seen_at = now() FROM licenses l
         WHERE l.license_key = $1 AND s.license_id = l.id AND s.machine_fingerprint = $2 AND s.released_at IS NULL
         RETURNING s.last_seen_at, l.active, l.revoked`,
        [body.license_key, body.machine_fingerprint],
      );
      if (rows.length === 0) return [400, { error: { code: 'NOT_ACTIVATED', message: 'no seat' } }];
      const s = rows[0];
      return [
        200,
        { valid: s.active && !s.revoked, status: 'active', code: null, heartbeat_timeout_seconds: null, next_heartbeat_before: null },
      ];
    },
    '/usage': async (body) => {
      // The least a counted use costs: one upsert that locks the period's counter row and adds 1 under the cap.
      const { rows } = await pool.query<{ uses: string }>(
        `INSERT INTO usage_counters AS c (license_id, period_start, uses)
         SELECT id, date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', 1 FROM licenses WHERE license_key = $1
         ON CONFLICT (license_id, period_start) DO UPDATE SET uses = c.uses + 1 WHERE c.uses + 1 <= 1000000000000
         RETURNING uses`,
        [body.license_key],
      );
      if (rows.length === 0) return invalidKey;
      return [200, { uses: Number(rows[0].uses), max_uses: 1_000_000_000_000, remaining: null, period_start: null, period_end: null }];
    },
    '/activate': async (body) => {
      // The write a seat binding needs at least: one row locked and changed, committed (a WAL flush).
      const { rows } = await pool.query<{ activated_at: Date }>(
        'UPDATE activations SET last_seen_at = now(), hostname = $2, app_version = $3 WHERE id = $1 RETURNING activated_at',
        [body.seat_id, body.hostname, body.app_version],
      );
      if (rows.length === 0) return [400, { error: { code: 'NOT_ACTIVATED', message: 'no such seat' } }];
      // The same members as the real payload (docs/client-api.md, The signed licence), so the same number of bytes is canonicalised and signed.
      const license = {
        license_key: body.license_key,
        product: 'POS_RETAIL',
        license_type: 'PERPETUAL',
        issued_at: issuedAt,
        expires_at: null,
        activated_at: rows[0].activated_at.toISOString(),
        machine_fingerprint: body.machine_fingerprint,
        grace_days: 7,
        limits: { max_installations: 1, max_operators: 5 },
        features: ['FISCAL_PRINTING', 'MULTI_OPERATOR', 'INVENTORY', 'REPORTS'],
        customer: { name: 'Customer 1 d.o.o.', email: 'office1@customer.example' },
        key_id: keyId,
        signed_at: new Date().toISOString(),
      };
      return [200, { license, signature: await signCanonical(license, privateKey) }];
    },
  };
}

function serve(): void {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 20) });
  const handlers = routes(pool, createPrivateKey(readFileSync(process.env.SIGNING_KEY_FILE as string, 'utf8')));
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') return send(res, 200, { status: 'ok' });
    const route = req.method === 'POST' ? handlers[req.url ?? ''] : undefined;
    if (!route) return send(res, 404, { error: { code: 'NOT_FOUND', message: 'Not found' } });
    readJson(req)
      .then(route)
      .then(([status, body]) => send(res, status, body))
      .catch(() => send(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Internal error' } }));
  });
  server.listen(Number(process.env.PORT), '127.0.0.1');
  const stop = () => {
    server.close(() => void pool.end().finally(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const workers = Number(process.env.WEB_CONCURRENCY ?? 1);
if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  const stopAll = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
  };
  process.on('SIGTERM', stopAll);
  process.on('SIGINT', stopAll);
  cluster.on('exit', () => {
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
} else {
  serve();
}
