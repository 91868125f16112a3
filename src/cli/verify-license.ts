import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { decodeLicenseFile } from '../activation/license-file';
import { pemOfJwk } from '../signing/jwk';
import { keyIdOf, LicenseVerification, verifySignedAnswer, verifySignedLicense } from '../signing/license-signature';

const USAGE = `Usage: licence-server verify-license <file.json | licence.lic> [--nonce <nonce>] [--public-key <public.pem> | --jwks <jwks.json> | --server <base URL>]

Verifies a saved activation response ({"license": ..., "signature": "RSA-SHA256:..."}), a licence file
(-----BEGIN LICENSE FILE-----, which must also be before its file_expires_at) or a signed
validate answer (POST /api/v1/validate with a nonce; give the nonce you sent with --nonce) and prints
"valid" (exit 0) or "invalid" with the reason (exit 1). The public key is picked by the key_id inside
the signed data: from a JWK Set file (GET /.well-known/jwks.json), from the server's
GET /api/v1/public-keys (default server: http://localhost:3000), or it is the one PEM file given.
Exit 2: the input could not be read.`;

class UsageError extends Error {}
class HelpWanted extends Error {}

interface Options {
  file: string;
  nonce?: string;
  publicKeyFile?: string;
  jwksFile?: string;
  server: string;
}

const VALUE_OPTIONS = ['--public-key', '--jwks', '--server', '--nonce'] as const;

function parseArgs(argv: string[]): Options {
  const positional: string[] = [];
  const values: Partial<Record<(typeof VALUE_OPTIONS)[number], string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if ((VALUE_OPTIONS as readonly string[]).includes(arg)) {
      const value = argv[++i];
      if (!value) throw new UsageError(`${arg} needs a value`);
      values[arg as (typeof VALUE_OPTIONS)[number]] = value;
    } else if (arg === '-h' || arg === '--help') {
      throw new HelpWanted();
    } else if (arg.startsWith('--')) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== 1) throw new UsageError('give exactly one file to verify');
  if ([values['--public-key'], values['--jwks'], values['--server']].filter(Boolean).length > 1) {
    throw new UsageError('give one of --public-key, --jwks or --server');
  }
  return {
    file: positional[0],
    nonce: values['--nonce'],
    publicKeyFile: values['--public-key'],
    jwksFile: values['--jwks'],
    server: values['--server'] ?? 'http://localhost:3000',
  };
}

/** Public keys by key_id. */
type Keyring = Map<string, string>;

function keysFromJwks(set: unknown, source: string): Keyring {
  const keys = (set as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) throw new Error(`${source} is not a JWK Set ({"keys": [...]})`);
  const ring: Keyring = new Map();
  for (const jwk of keys as { kty?: unknown; kid?: unknown; n?: unknown; e?: unknown; crv?: unknown; x?: unknown; status?: unknown }[]) {
    // A revoked key is listed so that verifiers drop it (docs/signing.md, Endorsed rotation).
    if (typeof jwk?.kid !== 'string' || jwk.status === 'revoked') continue;
    const rsa = jwk.kty === 'RSA' && typeof jwk.n === 'string' && typeof jwk.e === 'string';
    const ed25519 = jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.x === 'string';
    if (!rsa && !ed25519) continue;
    const pem = pemOfJwk(jwk as { kty: string; n?: string; e?: string; crv?: string; x?: string });
    // Trust the key, not the label: a kid that is not this key's id is ignored.
    if (keyIdOf(pem) === jwk.kid) ring.set(jwk.kid, pem);
  }
  return ring;
}

async function getJson(url: URL): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch((err: Error & { cause?: Error }) => {
    throw new Error(`cannot reach ${url.href}: ${err.cause?.message ?? err.message}`);
  });
  return { status: res.status, body: res.ok ? await res.json() : undefined };
}

/** GET /api/v1/public-keys (every published key); a server from before the keyring only has /api/v1/public-key. */
async function keysFromServer(server: string): Promise<Keyring> {
  const url = new URL('/api/v1/public-keys', server);
  const all = await getJson(url);
  if (all.status === 404) {
    const one = await getJson(new URL('/api/v1/public-key', server));
    const pem = (one.body as { public_key_pem?: unknown } | undefined)?.public_key_pem;
    if (typeof pem !== 'string') throw new Error(`GET ${server}/api/v1/public-key answered ${one.status}`);
    return new Map([[keyIdOf(pem), pem]]);
  }
  const keys = (all.body as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys)) throw new Error(`GET ${url.href} answered ${all.status}`);
  const ring: Keyring = new Map();
  for (const key of keys as { public_key_pem?: unknown; status?: unknown }[]) {
    if (typeof key?.public_key_pem === 'string' && key.status !== 'revoked') ring.set(keyIdOf(key.public_key_pem), key.public_key_pem);
  }
  return ring;
}

function readJson(file: string): unknown {
  const text = readFileSync(file, 'utf8');
  if (text.trimStart().startsWith('-----BEGIN LICENSE FILE-----')) {
    const document = decodeLicenseFile(text);
    if (document === undefined) throw new Error(`${file} is not a well-formed licence file`);
    return document;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not JSON: ${(err as Error).message}`, { cause: err });
  }
}

function readPublicKey(file: string): string {
  const pem = readFileSync(file, 'utf8');
  try {
    createPublicKey(pem);
  } catch {
    throw new Error(`${file} is not a PEM public key`);
  }
  return pem;
}

/** The key_id named inside the signed data: license.key_id of a licence, key_id of a validate answer. */
function signedKeyId(document: unknown, isAnswer: boolean): unknown {
  const doc = document as { key_id?: unknown; license?: { key_id?: unknown } } | null;
  return isAnswer ? doc?.key_id : doc?.license?.key_id;
}

/** The file an activation answer, licence file or validate answer is read from (exported for the e2e tests). */
export const readDocument = readJson;

/** A signed activation response or licence file; a licence file must also be within its TTL (docs/client-api.md, Licence file). */
export function verifyLicenseDocument(document: unknown, publicKeyPem: string, now = new Date()): LicenseVerification {
  const result = verifySignedLicense(document, publicKeyPem);
  const fileExpiry = (document as { license?: { file_expires_at?: unknown } }).license?.file_expires_at;
  if (result.valid && fileExpiry !== undefined && !(typeof fileExpiry === 'string' && Date.parse(fileExpiry) > now.getTime())) {
    return {
      valid: false,
      reason: `the signature is genuine, but the licence file expired at ${typeof fileExpiry === 'string' ? fileExpiry : JSON.stringify(fileExpiry)}: fetch a new one`,
    };
  }
  return result;
}

/**
 * `licence-server verify-license` (docs/signing.md): runs the command and returns the exit code; unreadable input is one
 * line on `err` and exit 2. Exported for the e2e test, which runs it against a live server.
 */
export async function verifyLicenseCommand(argv: string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  let options: Options;
  try {
    options = parseArgs(argv);
    const document = readJson(options.file);
    const isAnswer = typeof document === 'object' && document !== null && !('license' in document) && 'nonce' in document;
    if (isAnswer && options.nonce === undefined)
      throw new UsageError('this is a signed validate answer: give the nonce you sent with --nonce');
    let pem: string | undefined;
    if (options.publicKeyFile) {
      pem = readPublicKey(options.publicKeyFile);
    } else {
      const ring = options.jwksFile ? keysFromJwks(readJson(options.jwksFile), options.jwksFile) : await keysFromServer(options.server);
      const keyId = signedKeyId(document, isAnswer);
      pem = typeof keyId === 'string' ? ring.get(keyId) : undefined;
      if (!pem) {
        out('invalid');
        err(`  key ${String(keyId)} is not among the published keys (${[...ring.keys()].join(', ') || 'none'}): unknown or revoked`);
        return 1;
      }
    }
    const result: LicenseVerification = isAnswer
      ? verifySignedAnswer(document, pem, options.nonce as string)
      : verifyLicenseDocument(document, pem);
    if (result.valid) {
      out('valid');
      return 0;
    }
    out('invalid');
    err(`  ${result.reason}`);
    return 1;
  } catch (e) {
    if (e instanceof HelpWanted) {
      out(USAGE);
      return 0;
    }
    err(`verify-license: ${(e as Error).message}${e instanceof UsageError ? ' (licence-server verify-license --help)' : ''}`);
    return 2;
  }
}
