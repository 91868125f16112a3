import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { armor } from '../src/armor.js';
import { canonicalBytes, keyIdOf, KeySet } from '../src/crypto.js';

export interface StandIn {
  url: string;
  keyId: string;
  publicKeyPem: string;
  /** Paths the stand-in was asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A server that is not the vendor's (one hosts-file line away) and answers the client API like the real one,
 * with licences it signs with ITS OWN key and that key published at /public-keys and the JWKS.
 */
export async function startStandIn(): Promise<StandIn> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = keyIdOf(publicKey);
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const requests: string[] = [];
  const signed = (value: unknown) => 'RSA-SHA256:' + sign('sha256', canonicalBytes(value), privateKey as KeyObject).toString('base64');
  const now = () => new Date().toISOString();
  const licenseFor = (body: Record<string, string>) => ({
    license_key: body.license_key,
    product: body.product ?? 'POS_RETAIL',
    license_type: 'PERPETUAL',
    issued_at: now(),
    expires_at: null,
    activated_at: now(),
    signed_at: now(),
    machine_fingerprint: body.machine_fingerprint,
    grace_days: 3650,
    limits: { max_installations: 999 },
    features: ['everything'],
    customer: { name: 'Anyone', email: null },
    policy: { heartbeat_timeout_seconds: null, max_deactivations_per_30_days: null, license_file_ttl_days: 365 },
    key_id: keyId,
  });

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const body = (text ? JSON.parse(text) : {}) as Record<string, string>;
    const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
    requests.push(`${req.method} ${path}`);
    switch (path) {
      case '/api/v1/public-key':
        return answer(res, 200, { key_id: keyId, algorithm: 'RSA-SHA256', public_key_pem: publicKeyPem });
      case '/api/v1/public-keys':
        return answer(res, 200, { keys: [{ key_id: keyId, algorithm: 'RSA-SHA256', status: 'active', public_key_pem: publicKeyPem }] });
      case '/.well-known/jwks.json':
        return answer(res, 200, KeySet.from([{ public_key_pem: publicKeyPem }]).toJwks());
      case '/api/v1/activate': {
        const license = licenseFor(body);
        return answer(res, 200, { license, signature: signed(license) });
      }
      case '/api/v1/license-file': {
        const license = { ...licenseFor(body), file_issued_at: now(), file_expires_at: '2099-01-01T00:00:00.000Z' };
        return answer(res, 200, {
          license_file: armor('LICENSE FILE', { license, signature: signed(license) }),
          file_expires_at: license.file_expires_at,
        });
      }
      case '/api/v1/validate': {
        const { license_key, machine_fingerprint, nonce } = body;
        const result = { valid: true, status: 'active', expires_at: null, revoked: false, grace_ends_at: null, code: null };
        const unsigned = { ...result, nonce, license_key, machine_fingerprint, checked_at: now(), key_id: keyId };
        return answer(res, 200, { ...unsigned, signature: signed(unsigned) });
      }
      case '/api/v1/heartbeat':
        return answer(res, 200, {
          valid: true,
          status: 'active',
          code: null,
          heartbeat_timeout_seconds: null,
          next_heartbeat_before: null,
        });
      default:
        return answer(res, 404, { error: { code: 'NOT_FOUND', message: 'not found', details: {} } });
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res).catch(() => answer(res, 500, {})));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    keyId,
    publicKeyPem,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A reverse proxy that serves `target` under `basePath` (as `https://vendor.example/licensing/` would) and 404s anything else. */
export async function startPathProxy(
  target: string,
  basePath: string,
): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    if (!path.startsWith(basePath + '/')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'NOT_FOUND', message: `outside ${basePath}`, details: {} } }));
      return;
    }
    void (async () => {
      let text = '';
      for await (const chunk of req) text += String(chunk);
      const upstream = await fetch(target + path.slice(basePath.length), {
        method: req.method,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: text === '' ? undefined : text,
      });
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(await upstream.text());
    })().catch(() => {
      res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}${basePath}/`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
