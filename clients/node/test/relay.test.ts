import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  KeySet,
  LicenseClient,
  StateError,
  VerificationError,
  verifyRelayLease,
  verifyRelayPool,
  type JsonWebKeySet,
  type RelayLeaseAnswer,
} from '../src/index.js';
import { REPO_ROOT } from './server.js';

interface RelayCase {
  name: string;
  kind: 'relay_lease';
  input: {
    answer: RelayLeaseAnswer;
    trusted_keys: string[];
    revoked_keys: string[];
    machine_fingerprint: string;
    product?: string;
    now: string;
  };
  expect: { verdict: 'accept' | 'refuse'; reason: string | null };
}
const listPath = join(REPO_ROOT, 'clients', 'relay-conformance.json');
const list = JSON.parse(readFileSync(listPath, 'utf8')) as { keys: Record<string, { public_key_pem: string }>; cases: RelayCase[] };
const caseNamed = (name: string) => list.cases.find((c) => c.name === name)!;
const VALID = caseNamed('relay-valid');

interface Expect {
  verdict: 'accept' | 'refuse';
  reason: string | null;
}
const vectors = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'test-vectors', 'relay.json'), 'utf8')) as {
  now: string;
  vendor_jwks: JsonWebKeySet;
  pools: { name: string; pool_file: string; expect: Expect }[];
  leases: { name: string; machine_fingerprint: string; answer: RelayLeaseAnswer; expect: Expect }[];
};
const verdictOf = (result: { ok: boolean; reason?: string }) => ({
  verdict: result.ok ? 'accept' : 'refuse',
  reason: result.ok ? null : result.reason,
});

/** The server's pool and lease vectors (scripts/test-vectors.ts): every client reaches the same verdicts and reasons. */
describe('docs/test-vectors/relay.json', () => {
  const keys = KeySet.from([], vectors.vendor_jwks);
  const now = new Date(vectors.now);
  it('has the cases every client runs: valid, forged, differing from its payload, another key, another machine, expired', () => {
    const reasons = [...vectors.pools, ...vectors.leases].map((c) => c.expect.reason);
    for (const reason of [null, 'SIGNATURE_INVALID', 'POOL_MISMATCH', 'LEASE_MISMATCH', 'LEASE_EXPIRED'])
      assert.ok(reasons.includes(reason), String(reason));
  });
  for (const c of vectors.pools) {
    it(`pool ${c.name}: ${c.expect.verdict}${c.expect.reason ? ` ${c.expect.reason}` : ''}`, () => {
      assert.deepEqual(verdictOf(verifyRelayPool(c.pool_file, { keys, now })), c.expect);
    });
  }
  for (const c of vectors.leases) {
    it(`lease ${c.name}: ${c.expect.verdict}${c.expect.reason ? ` ${c.expect.reason}` : ''}`, () => {
      assert.deepEqual(verdictOf(verifyRelayLease(c.answer, { keys, now, fingerprint: c.machine_fingerprint })), c.expect);
    });
  }
});

/** The relay pool and lease cases every client runs (clients/conformance-format.md, relay_lease). */
describe('clients/relay-conformance.json', () => {
  it('is what clients/relay-cases.mjs makes (deterministic: the same cases every run; the file is Prettier-formatted)', () => {
    const made = execFileSync(process.execPath, [join(REPO_ROOT, 'clients', 'relay-cases.mjs')], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(made), list);
  });

  for (const c of list.cases) {
    it(`${c.name}: ${c.expect.verdict}${c.expect.reason ? ` ${c.expect.reason}` : ''}`, () => {
      const result = verifyRelayLease(c.input.answer, {
        keys: KeySet.from(c.input.trusted_keys.map((name) => list.keys[name])),
        revoked: c.input.revoked_keys,
        fingerprint: c.input.machine_fingerprint,
        product: c.input.product,
        now: new Date(c.input.now),
      });
      assert.deepEqual(verdictOf(result), c.expect);
    });
  }
});

/** A relay on the network that answers with a fixed lease answer (the real relay: relay-online.test.ts). */
async function fixedRelay(answer: RelayLeaseAnswer): Promise<{ url: string; paths: string[]; bodies: unknown[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const bodies: unknown[] = [];
  let leased = false;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      paths.push(request.url ?? '');
      bodies.push(JSON.parse(text || 'null'));
      const send = (status: number, body: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (request.url === '/relay/v1/leases') return ((leased = true), send(201, answer));
      if (!leased) return send(400, { error: { code: 'NOT_ACTIVATED', message: 'no lease', details: {} } });
      if (request.url === '/relay/v1/leases/heartbeat') return send(200, answer);
      if (request.url === '/relay/v1/leases/release') return ((leased = false), send(200, { released: 1 }));
      send(404, { error: { code: 'NOT_FOUND', message: 'no route', details: {} } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, paths, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const clientFor = (c: RelayCase, statePath = join(mkdtempSync(join(tmpdir(), 'relay-client-')), 'state.json')) =>
  new LicenseClient({
    serverUrl: 'http://127.0.0.1:9',
    statePath,
    appSalt: 'relay-test',
    publicKeys: c.input.trusted_keys.map((name) => list.keys[name]),
    pinToShippedKeys: true,
    fingerprint: c.input.machine_fingerprint,
    product: c.input.product,
    now: () => new Date(c.input.now),
    retries: 0,
  });

describe('leaseFromRelay() against a relay on the network', () => {
  it('leases, heartbeats and releases a verified seat, sending this machine’s fingerprint', async () => {
    const relay = await fixedRelay(VALID.input.answer);
    try {
      const seat = await clientFor(VALID).leaseFromRelay(relay.url, { hostname: 'bench-7' });
      assert.equal(seat.lease.lease_id, VALID.input.answer.lease.lease_id);
      assert.equal(seat.pool.license.product, 'CAD_SUITE');
      assert.equal(seat.pool.seats, 10);
      assert.deepEqual(relay.bodies[0], { machine_fingerprint: VALID.input.machine_fingerprint, hostname: 'bench-7' });
      assert.equal((await seat.heartbeat()).lease_id, VALID.input.answer.lease.lease_id);
      assert.deepEqual(await seat.release(), { released: 1 });
      await assert.rejects(seat.heartbeat(), (err: Error & { code?: string }) => err.code === 'NOT_ACTIVATED');
      assert.deepEqual(relay.paths, [
        '/relay/v1/leases',
        '/relay/v1/leases/heartbeat',
        '/relay/v1/leases/release',
        '/relay/v1/leases/heartbeat',
      ]);
    } finally {
      await relay.close();
    }
  });

  for (const name of [
    'relay-pool-forged',
    'relay-pool-unknown-key',
    'relay-lease-other-key',
    'relay-lease-vendor-key',
    'relay-lease-other-fingerprint',
  ]) {
    it(`refuses a relay answering like ${name} (${caseNamed(name).expect.reason})`, async () => {
      const c = caseNamed(name);
      const relay = await fixedRelay(c.input.answer);
      try {
        await assert.rejects(
          clientFor(c).leaseFromRelay(relay.url),
          (err: unknown) => err instanceof VerificationError && err.code === c.expect.reason,
        );
      } finally {
        await relay.close();
      }
    });
  }

  it('the heartbeat loop beats at heartbeat_interval_seconds and stops when the relay says the seat is gone', async () => {
    const fast = caseNamed('relay-valid');
    const relay = await fixedRelay(fast.input.answer);
    try {
      const seat = await clientFor(fast).leaseFromRelay(relay.url);
      // The fixture's interval is 100 s; a seat whose lease says 0.05 s is what a short RELAY_LEASE_SECONDS gives.
      Object.defineProperty(seat, 'lease', { get: () => ({ ...fast.input.answer.lease, heartbeat_interval_seconds: 0.05 }) });
      let beats = 0;
      let lost = '';
      const loop = seat.startHeartbeat({
        onBeat: () => {
          if (++beats === 2) void seat.release();
        },
        onLeaseLost: (err) => (lost = err.code),
      });
      await loop.stopped;
      assert.ok(beats >= 2, `beats: ${beats}`);
      assert.equal(lost, 'NOT_ACTIVATED');
    } finally {
      await relay.close();
    }
  });
});

describe('the state file’s folder', () => {
  it('is created with mode 0700 when missing, parents included, before any call', () => {
    const root = mkdtempSync(join(tmpdir(), 'state-folder-'));
    const statePath = join(root, 'app', 'licence', 'state.json');
    clientFor(VALID, statePath);
    assert.equal(statSync(join(root, 'app', 'licence')).mode & 0o777, 0o700);
    assert.equal(statSync(join(root, 'app')).mode & 0o777, 0o700);
  });

  it('that cannot be created is a StateError STATE_PATH at construction, before any network call', async () => {
    const root = mkdtempSync(join(tmpdir(), 'state-folder-'));
    writeFileSync(join(root, 'a-file'), 'not a folder');
    let requests = 0;
    assert.throws(
      () =>
        new LicenseClient({
          serverUrl: 'http://127.0.0.1:9',
          statePath: join(root, 'a-file', 'state.json'),
          appSalt: 'x',
          publicKeys: [list.keys.ed25519],
          fetch: (() => (requests++, Promise.reject(new Error('no network')))) as typeof fetch,
        }),
      (err: unknown) => err instanceof StateError && err.code === 'STATE_PATH' && err.path === join(root, 'a-file', 'state.json'),
    );
    assert.equal(requests, 0);
  });
});
