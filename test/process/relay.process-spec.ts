import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { findFreePort } from '../../src/database/processes';
import { armorJson, dearmorJson, Pool, POOL_FILE_LABEL, POOL_REQUEST_LABEL, verifyLease, verifyPoolFile } from '../../src/relay/pool-file';
import type { VerifyingKey } from '../../src/signing/envelope';
import { keyIdOf } from '../../src/signing/license-signature';
import { fingerprint } from '../support/factories';
import { Deployment, startDeployment } from './support/deployment';

// The operator's command, as installed (`licence-server relay ...`, docs/relay.md).
const MAIN = join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');
const LEASE_SECONDS = 10;

/** `relay ...` as an operator runs it: the built command, nothing but its arguments and environment. */
function relayCommand(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [MAIN, 'relay', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
}

interface RelayProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `relay start` from environment variables only; resolves once it listens, rejects with its output if it exits first. */
async function startRelayProcess(env: Record<string, string>): Promise<RelayProcess> {
  const port = env.PORT ?? String(await findFreePort());
  const child = spawn(process.execPath, [MAIN, 'relay', 'start'], { env: { PATH: process.env.PATH ?? '', ...env, PORT: port } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.includes('listening on port')) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`the relay exited with ${code}: ${output}`));
    });
  });
  return { url: `http://127.0.0.1:${port}`, child, output: () => output, exited };
}

/** `relay start` that must refuse: its exit code and its output. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN, 'relay', 'start'], { env: { PATH: process.env.PATH ?? '', PORT: '0', ...env } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output };
}

const post = async (url: string, body: unknown) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the relay's answers, read by the assertions
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

describe('the relay as a process (docs/relay.md)', () => {
  let vendor: Deployment;
  let root: string;
  let jwksFile: string;
  let vendorKeys: Map<string, VerifyingKey>;
  const running: RelayProcess[] = [];

  beforeAll(async () => {
    vendor = await startDeployment();
    root = mkdtempSync(join(tmpdir(), 'relay-process-'));
    const jwks = await (await vendor.request('/.well-known/jwks.json')).json();
    jwksFile = join(root, 'vendor-keys.json');
    writeFileSync(jwksFile, JSON.stringify(jwks));
    vendorKeys = new Map(
      (jwks as { keys: Record<string, unknown>[] }).keys.map((k) => [
        k.kid as string,
        { key: createPublicKey({ key: k as never, format: 'jwk' }) },
      ]),
    );
  }, 180_000);

  afterAll(async () => {
    for (const relay of running) relay.child.kill('SIGKILL');
    await vendor?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  }, 60_000);

  async function licence(seats: number, extra: Record<string, unknown> = {}) {
    return vendor.admin<{ id: number; license_key: string }>('POST', '/api/v1/admin/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      customer_name: 'Relay Customer',
      limits: { max_installations: seats },
      ...extra,
    });
  }

  /** relay init, then the vendor issues its pool; returns the data folder, the request and the pool file's path. */
  async function setUp(name: string, licenseKey: string, seats: number, editRequest?: (r: Record<string, unknown>) => void) {
    const data = join(root, name);
    const init = relayCommand(['init', '--data', data, '--license', licenseKey, '--seats', String(seats)]);
    expect(init.status).toBe(0);
    let request = init.stdout;
    if (editRequest) {
      const parsed = dearmorJson(POOL_REQUEST_LABEL, request);
      if (!parsed.ok) throw new Error(parsed.message);
      editRequest(parsed.value);
      request = armorJson(POOL_REQUEST_LABEL, parsed.value);
    }
    const issued = await vendor.admin<{ pool_file: string; pool_id: string }>('POST', '/api/v1/admin/relay-pools', { request });
    const poolFile = join(root, `${name}.pool`);
    writeFileSync(poolFile, issued.pool_file);
    return { data, request, poolFile, poolId: issued.pool_id };
  }

  const envFor = (data: string, poolFile: string, extra: Record<string, string> = {}) => ({
    RELAY_DATA_DIR: data,
    RELAY_POOL_FILE: poolFile,
    RELAY_VENDOR_KEYS: jwksFile,
    RELAY_LEASE_SECONDS: String(LEASE_SECONDS),
    ...extra,
  });

  async function start(env: Record<string, string>) {
    const relay = await startRelayProcess(env);
    running.push(relay);
    return relay;
  }

  describe('a pool of 3 seats', () => {
    let relay: RelayProcess;
    let setup: Awaited<ReturnType<typeof setUp>>;
    let pool: Pool;
    const machines = [1, 2, 3, 4].map((n) => fingerprint(`relay-machine-${n}`));
    const leaseIds = new Map<string, string>();

    beforeAll(async () => {
      const lic = await licence(5);
      setup = await setUp('three', lic.license_key, 3);
      relay = await start(envFor(setup.data, setup.poolFile));
      const verified = verifyPoolFile(readFileSync(setup.poolFile, 'utf8'), (id) => vendorKeys.get(id));
      if (!verified.ok) throw new Error(verified.message);
      pool = verified.value.pool;
    }, 60_000);

    it('init keeps the private key in the data folder only (folder 0700, key 0600) and prints the same key on a second run', () => {
      expect(statSync(setup.data).mode & 0o777).toBe(0o700);
      expect(statSync(join(setup.data, 'relay-key.pem')).mode & 0o777).toBe(0o600);
      const again = relayCommand(['init', '--data', setup.data, '--license', pool.license.license_key, '--seats', '3']);
      expect(again.stdout).toBe(setup.request);
      expect(again.stdout).not.toContain('PRIVATE');
    });

    it('lends N seats to N machines, each lease signed by the relay key; the next machine is refused', async () => {
      for (const machine of machines.slice(0, 3)) {
        const res = await post(`${relay.url}/relay/v1/leases`, { machine_fingerprint: machine, hostname: 'floor-pc' });
        expect(res.status).toBe(201);
        expect(Object.keys(res.body).sort()).toEqual(['envelope', 'lease', 'pool_file']);
        expect(Object.keys(res.body.lease).sort()).toEqual([
          'expires_at',
          'heartbeat_interval_seconds',
          'issued_at',
          'lease_id',
          'machine_fingerprint',
          'pool_id',
        ]);
        expect(res.body.lease.heartbeat_interval_seconds).toBe(Math.floor(LEASE_SECONDS / 3));
        expect(res.body.envelope).toMatchObject({ alg: 'EdDSA', key_id: pool.relay_key_id });
        const verdict = verifyLease(res.body, pool, machine, new Date());
        if (!verdict.ok) throw new Error(verdict.message);
        expect(res.body.pool_file).toBe(readFileSync(setup.poolFile, 'utf8'));
        leaseIds.set(machine, res.body.lease.lease_id as string);
      }
      const refused = await post(`${relay.url}/relay/v1/leases`, { machine_fingerprint: machines[3] });
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'ACTIVATION_LIMIT_REACHED' } } });
      const again = await post(`${relay.url}/relay/v1/leases`, {
        machine_fingerprint: machines[0].toUpperCase().replace('SHA256', 'sha256'),
      });
      expect(again.status).toBe(200);
      expect(again.body.lease.lease_id).toBe(leaseIds.get(machines[0]));
      const status = (await (await fetch(`${relay.url}/relay/v1/status`)).json()) as Record<string, unknown>;
      expect(status).toEqual({
        pool_id: pool.pool_id,
        license_key: pool.license.license_key,
        seats: 3,
        leased: 3,
        expires_at: pool.expires_at,
      });
    });

    it('bad input is 400 VALIDATION_ERROR (never 500); an unknown route 404', async () => {
      const bad = await fetch(`${relay.url}/relay/v1/leases`, { method: 'POST', body: '{not json' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
      for (const body of [
        [],
        { machine_fingerprint: 'abc' },
        { machine_fingerprint: 7 },
        { machine_fingerprint: machines[3], hostname: 5 },
      ]) {
        const res = await post(`${relay.url}/relay/v1/leases`, body);
        expect(res).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
      }
      expect((await post(`${relay.url}/relay/v1/leases/heartbeat`, {})).body.error.details.fields[0].field).toBe('machine_fingerprint');
      expect((await fetch(`${relay.url}/relay/v1/nothing`)).status).toBe(404);
    });

    it('kill -9 and a restart keep every lease: the same lease_ids, no seat more', async () => {
      for (const machine of machines.slice(0, 3))
        expect((await post(`${relay.url}/relay/v1/leases/heartbeat`, { machine_fingerprint: machine })).status).toBe(200);
      relay.child.kill('SIGKILL');
      await relay.exited;
      relay = await start(envFor(setup.data, setup.poolFile));
      for (const machine of machines.slice(0, 3)) {
        const beat = await post(`${relay.url}/relay/v1/leases/heartbeat`, { machine_fingerprint: machine });
        expect(beat.status).toBe(200);
        expect(beat.body.lease.lease_id).toBe(leaseIds.get(machine));
      }
      expect((await post(`${relay.url}/relay/v1/leases`, { machine_fingerprint: machines[3] })).body.error.code).toBe(
        'ACTIVATION_LIMIT_REACHED',
      );
    });

    it('a second relay on the same data folder is refused while the first runs', async () => {
      const second = await refusedStart(envFor(setup.data, setup.poolFile));
      expect(second.code).not.toBe(0);
      expect(second.output.trim().split('\n')).toHaveLength(1);
      expect(second.output).toContain('another relay');
    });

    it('release frees a seat; a lease that stops heartbeating is free again after RELAY_LEASE_SECONDS', async () => {
      expect(await post(`${relay.url}/relay/v1/leases/release`, { machine_fingerprint: machines[2] })).toEqual({
        status: 200,
        body: { released: 1 },
      });
      expect((await post(`${relay.url}/relay/v1/leases/release`, { machine_fingerprint: machines[2] })).body.error.code).toBe(
        'NOT_ACTIVATED',
      );
      expect((await post(`${relay.url}/relay/v1/leases`, { machine_fingerprint: machines[3] })).status).toBe(201);
      // machines[0] keeps beating; machines[1] and machines[3] go silent.
      const deadline = Date.now() + (LEASE_SECONDS + 1.5) * 1000;
      while (Date.now() < deadline) {
        expect((await post(`${relay.url}/relay/v1/leases/heartbeat`, { machine_fingerprint: machines[0] })).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
      expect((await post(`${relay.url}/relay/v1/leases/heartbeat`, { machine_fingerprint: machines[1] })).body.error.code).toBe(
        'NOT_ACTIVATED',
      );
      const status = (await (await fetch(`${relay.url}/relay/v1/status`)).json()) as { leased: number };
      expect(status.leased).toBe(1);
      expect((await post(`${relay.url}/relay/v1/leases`, { machine_fingerprint: machines[2] })).status).toBe(201);
    }, 60_000);
  });

  it('50 concurrent lease requests for 10 seats lend exactly 10', async () => {
    const lic = await licence(10);
    const { data, poolFile } = await setUp('ten', lic.license_key, 10);
    const relay = await start(envFor(data, poolFile));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, n) => post(`${relay.url}/relay/v1/leases`, { machine_fingerprint: fingerprint(`crowd-${n}`) })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
    expect(answers.filter((a) => a.status === 400 && a.body.error.code === 'ACTIVATION_LIMIT_REACHED')).toHaveLength(40);
    expect(new Set(answers.filter((a) => a.status === 201).map((a) => a.body.lease.lease_id)).size).toBe(10);
    const status = (await (await fetch(`${relay.url}/relay/v1/status`)).json()) as { leased: number };
    expect(status.leased).toBe(10);
  }, 60_000);

  it('limits requests per IP and route (RELAY_RATE_LIMIT): 429 RATE_LIMITED with Retry-After', async () => {
    const lic = await licence(1);
    const { data, poolFile } = await setUp('limited', lic.license_key, 1);
    const relay = await start(envFor(data, poolFile, { RELAY_RATE_LIMIT: '2' }));
    for (let i = 0; i < 2; i++) expect((await fetch(`${relay.url}/relay/v1/status`)).status).toBe(200);
    const limited = await fetch(`${relay.url}/relay/v1/status`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await limited.json()) as { error: { code: string; details: { retry_after_seconds: number } } };
    expect(body.error.code).toBe('RATE_LIMITED');
    expect(body.error.details.retry_after_seconds).toBeGreaterThan(0);
    // Another route has its own count.
    expect((await post(`${relay.url}/relay/v1/leases`, { machine_fingerprint: fingerprint('limited') })).status).toBe(201);
  }, 60_000);

  describe('refuses to start, with one line and a non-zero exit', () => {
    const oneLine = (result: { code: number | null; output: string }, words: string) => {
      expect(result.code).not.toBe(0);
      expect(result.output.trim().split('\n')).toHaveLength(1);
      expect(result.output).toContain(words);
    };

    it('a forged pool (seats changed, signature kept)', async () => {
      const lic = await licence(4);
      const { data, poolFile } = await setUp('forged', lic.license_key, 1);
      const parsed = dearmorJson(POOL_FILE_LABEL, readFileSync(poolFile, 'utf8'));
      if (!parsed.ok) throw new Error(parsed.message);
      const { pool, envelope } = parsed.value as { pool: Pool; envelope: { payload: string } };
      const forged = { ...pool, seats: 4 };
      const forgedFile = join(root, 'forged-signature.pool');
      writeFileSync(
        forgedFile,
        armorJson(POOL_FILE_LABEL, {
          pool: forged,
          envelope: { ...envelope, payload: Buffer.from(JSON.stringify(forged)).toString('base64url') },
        }),
      );
      oneLine(await refusedStart(envFor(data, forgedFile)), 'refused');
      const beside = join(root, 'forged-beside.pool');
      writeFileSync(beside, armorJson(POOL_FILE_LABEL, { pool: forged, envelope }));
      oneLine(await refusedStart(envFor(data, beside)), 'not exactly');
    }, 60_000);

    it('a pool for another machine fingerprint', async () => {
      const lic = await licence(2);
      const { data, poolFile } = await setUp(
        'elsewhere',
        lic.license_key,
        1,
        (r) => (r.relay_fingerprint = fingerprint('another-machine')),
      );
      oneLine(await refusedStart(envFor(data, poolFile)), 'made for machine');
    }, 60_000);

    it("a pool made for another relay's key", async () => {
      const lic = await licence(2);
      const mine = await setUp('mine', lic.license_key, 1);
      const theirs = await setUp('theirs', lic.license_key, 1);
      oneLine(await refusedStart(envFor(mine.data, theirs.poolFile)), 'relay key');
    }, 60_000);

    it('an expired pool', async () => {
      const expiresAt = Date.now() + 8000;
      const lic = await licence(2, { expires_at: new Date(expiresAt).toISOString(), grace_days: 0 });
      const { data, poolFile } = await setUp('expiring', lic.license_key, 1);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 500)));
      oneLine(await refusedStart(envFor(data, poolFile)), 'expired');
    }, 60_000);

    it('vendor keys that are not the signer, and a missing variable', async () => {
      const lic = await licence(2);
      const { data, poolFile } = await setUp('strangers', lic.license_key, 1);
      const strangers = join(root, 'strangers.json');
      const { publicKey } = generateKeyPairSync('ed25519');
      writeFileSync(
        strangers,
        JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: keyIdOf(publicKey), alg: 'EdDSA', use: 'sig' }] }),
      );
      oneLine(await refusedStart({ ...envFor(data, poolFile), RELAY_VENDOR_KEYS: strangers }), 'UNKNOWN_KEY');
      const { RELAY_POOL_FILE: _unused, ...withoutPool } = envFor(data, poolFile);
      oneLine(await refusedStart(withoutPool), 'RELAY_POOL_FILE');
      oneLine(await refusedStart({ ...envFor(data, poolFile), RELAY_LEASE_SECONDS: '5' }), 'RELAY_LEASE_SECONDS');
    }, 60_000);
  });
});
