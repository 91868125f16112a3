// Starts a real relay for the clients' online tests (docs/relay.md): `relay init` on a fresh data folder, the pool
// request submitted to a running vendor server, `relay start` with the issued pool file and the vendor's JWKS. With
// --forged, the relay runs a pool re-signed by a key of its own (and that key as its "vendor keys"), as someone who
// wants more seats than the vendor issued would: the relay starts, and every client must refuse its leases.
//
//   node clients/relay-for-tests.mjs --server URL --api-key KEY --license KEY [--seats N] [--forged]
//
// Prints one JSON line {"url", "pool_id"} once the relay answers, then runs until its standard input closes (or
// SIGTERM), and stops the relay and removes its data folder. Uses the repository's build (npm run build).
import { spawn, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const relayMain = join(root, 'dist', 'src', 'relay', 'main.js');
const { values } = parseArgs({
  options: {
    server: { type: 'string' },
    'api-key': { type: 'string' },
    license: { type: 'string' },
    seats: { type: 'string', default: '2' },
    forged: { type: 'boolean', default: false },
    'lease-seconds': { type: 'string', default: '30' },
  },
});
const fail = (message) => {
  process.stderr.write(`relay-for-tests: ${message}\n`);
  process.exit(1);
};
if (!values.server || !values['api-key'] || !values.license) fail('--server, --api-key and --license are required');

const data = mkdtempSync(join(tmpdir(), 'relay-for-tests-'));
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
const init = spawnSync(
  process.execPath,
  [relayMain, 'relay', 'init', '--data', join(data, 'relay'), '--license', values.license, '--seats', values.seats],
  {
    encoding: 'utf8',
    env,
  },
);
if (init.status !== 0) fail(`relay init: ${init.stderr}`);

const issued = await fetch(`${values.server}/api/v1/admin/relay-pools`, {
  method: 'POST',
  headers: { 'x-api-key': values['api-key'], 'content-type': 'application/json' },
  body: JSON.stringify({ request: init.stdout }),
});
const pool = await issued.json();
if (issued.status !== 201) fail(`POST /relay-pools: ${issued.status} ${JSON.stringify(pool)}`);
let poolFile = pool.pool_file;
let vendorKeys = await (await fetch(`${values.server}/.well-known/jwks.json`)).json();

if (values.forged) {
  // The same signed bytes, signed again by a key the vendor never had.
  const forger = generateKeyPairSync('ed25519');
  const keyId = createHash('sha256')
    .update(forger.publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
  const lines = poolFile.split('\n').filter((line) => line && !line.startsWith('-----'));
  const document = JSON.parse(Buffer.from(lines.join(''), 'base64').toString('utf8'));
  const bytes = Buffer.from(document.envelope.payload, 'base64url');
  document.envelope = {
    payload: document.envelope.payload,
    alg: 'EdDSA',
    key_id: keyId,
    signature: sign(null, bytes, forger.privateKey).toString('base64url'),
  };
  const base64 = Buffer.from(JSON.stringify(document), 'utf8').toString('base64');
  poolFile = ['-----BEGIN RELAY POOL-----', ...base64.match(/.{1,64}/g), '-----END RELAY POOL-----', ''].join('\n');
  vendorKeys = { keys: [{ ...forger.publicKey.export({ format: 'jwk' }), kid: keyId, alg: 'EdDSA', use: 'sig' }] };
}
writeFileSync(join(data, 'pool.txt'), poolFile);
writeFileSync(join(data, 'vendor-keys.json'), JSON.stringify(vendorKeys));

const port = await new Promise((resolve, reject) => {
  const probe = createServer();
  probe.once('error', reject);
  probe.listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});
let output = '';
const relay = spawn(
  process.execPath,
  [
    relayMain,
    'relay',
    'start',
    '--data',
    join(data, 'relay'),
    '--pool',
    join(data, 'pool.txt'),
    '--vendor-keys',
    join(data, 'vendor-keys.json'),
  ],
  { env: { ...env, PORT: String(port), RELAY_LEASE_SECONDS: values['lease-seconds'] }, stdio: ['ignore', 'pipe', 'pipe'] },
);
relay.stdout.on('data', (d) => (output += d));
relay.stderr.on('data', (d) => (output += d));
const stop = () => {
  relay.kill('SIGTERM');
  rmSync(data, { recursive: true, force: true });
  process.exit(0);
};
process.once('SIGTERM', stop);

const url = `http://127.0.0.1:${port}`;
for (const deadline = Date.now() + 60_000; ;) {
  if (relay.exitCode !== null) fail(`relay start exited: ${output}`);
  if (Date.now() > deadline) fail(`the relay did not answer: ${output}`);
  try {
    if ((await fetch(`${url}/relay/v1/status`)).ok) break;
  } catch {
    // not listening yet
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
process.stdout.write(JSON.stringify({ url, pool_id: pool.pool_id }) + '\n');
process.stdin.resume();
process.stdin.on('end', stop);
process.stdin.on('close', stop);
