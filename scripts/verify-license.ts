import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { verifySignedLicense } from '../src/signing/license-signature';

const USAGE = `Usage: npm run verify-license -- <payload.json> [--public-key <public.pem> | --server <base URL>]

Verifies a saved activation response ({"license": ..., "signature": "RSA-SHA256:..."}) and prints
"valid" (exit 0) or "invalid" (exit 1). The public key comes from a PEM file, or from the server's
GET /api/v1/public-key (default server: http://localhost:3000). Exit 2: the input could not be read.`;

class UsageError extends Error {}

interface Options {
  payloadFile: string;
  publicKeyFile?: string;
  server: string;
}

function parseArgs(argv: string[]): Options {
  const positional: string[] = [];
  let publicKeyFile: string | undefined;
  let server: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--public-key' || arg === '--server') {
      const value = argv[++i];
      if (!value) throw new UsageError(`${arg} needs a value`);
      if (arg === '--public-key') publicKeyFile = value;
      else server = value;
    } else if (arg === '-h' || arg === '--help') {
      throw new UsageError('');
    } else if (arg.startsWith('--')) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      positional.push(arg);
    }
  }
  if (positional.length !== 1) throw new UsageError('give exactly one payload file');
  if (publicKeyFile && server) throw new UsageError('give either --public-key or --server, not both');
  return { payloadFile: positional[0], publicKeyFile, server: server ?? 'http://localhost:3000' };
}

async function fetchPublicKey(server: string): Promise<string> {
  const url = new URL('/api/v1/public-key', server).href;
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch((err: Error & { cause?: Error }) => {
    throw new Error(`cannot reach ${url}: ${err.cause?.message ?? err.message}`);
  });
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  const body = (await res.json()) as { public_key_pem?: unknown };
  if (typeof body.public_key_pem !== 'string') throw new Error(`GET ${url} returned no public_key_pem`);
  return body.public_key_pem;
}

function readPayload(file: string): unknown {
  const text = readFileSync(file, 'utf8');
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

async function main(argv: string[]): Promise<number> {
  const options = parseArgs(argv);
  const document = readPayload(options.payloadFile);
  const publicKeyPem = options.publicKeyFile ? readPublicKey(options.publicKeyFile) : await fetchPublicKey(options.server);
  const result = verifySignedLicense(document, publicKeyPem);
  if (result.valid) {
    console.log('valid');
    return 0;
  }
  console.log('invalid');
  console.error(`  ${result.reason}`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: Error) => {
    if (err instanceof UsageError) console.error(err.message ? `${err.message}\n\n${USAGE}` : USAGE);
    else console.error(`verify-license: ${err.message}`);
    process.exit(2);
  },
);
