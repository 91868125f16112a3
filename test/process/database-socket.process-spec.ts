import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { Deployment, startDeployment } from './support/deployment';

/** How the server's own backends of `database` are connected: Unix-socket backends have client_port -1. */
async function backendsOf(adminUrl: string, database: string): Promise<{ socket: number; tcp: number }> {
  const client = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ socket: number; tcp: number }>(
      `SELECT count(*) FILTER (WHERE client_port = -1)::int AS socket, count(*) FILTER (WHERE client_port <> -1)::int AS tcp
         FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
      [database],
    );
    return rows[0];
  } finally {
    await client.end();
  }
}

/** A licence activated and validated over HTTP: the client routes' statements went through the server's connection. */
async function activateAndValidate(d: Deployment): Promise<void> {
  const license = await d.admin<{ license_key: string }>('POST', '/api/v1/admin/licenses', {
    product_code: 'POS_RETAIL',
    license_type: 'YEARLY',
    customer_name: 'Socket Customer',
  });
  const seat = { license_key: license.license_key, machine_fingerprint: `sha256:${randomBytes(32).toString('hex')}` };
  const post = (path: string, body: object) =>
    d.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const activated = await post('/api/v1/activate', { ...seat, hostname: 'socket-host' });
  expect(activated.status).toBe(200);
  expect(((await activated.json()) as { signature: string }).signature).toMatch(/^RSA-SHA256:/);
  const validated = await post('/api/v1/validate', seat);
  expect(await validated.json()).toMatchObject({ valid: true, status: 'active' });
}

/**
 * The server reaching PostgreSQL through its Unix-domain socket (docs/configuration.md, Database URL): by default with
 * the embedded PostgreSQL, whose socket lives in its data folder, and with a DATABASE_URL of the documented form
 * `postgresql://user:pw@/db?host=/folder&port=N` (here pointed at that same embedded server's socket). Every backend
 * the server opens is then a socket connection (client_port -1); loopback TCP stays open for tools.
 */
describe("the server on PostgreSQL's Unix socket", () => {
  let embedded: Deployment | undefined;
  let second: Deployment | undefined;
  let adminUrl: string;
  let pgDir: string;
  let port: string;
  let password: string;

  beforeAll(async () => {
    embedded = await startDeployment({}, { database: 'given' });
    pgDir = join(embedded.env.DATA_DIR, 'postgres');
    // A tool reaches the embedded server over loopback TCP: the port from postmaster.pid, the generated password.
    port = readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[3].trim();
    password = readFileSync(join(embedded.env.DATA_DIR, 'postgres-password'), 'utf8').trim();
    adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  }, 180_000);
  afterAll(async () => {
    await second?.stop();
    await embedded?.stop();
  }, 60_000);

  it('connects to the embedded PostgreSQL (DATABASE_URL unset) through the socket in its data folder', async () => {
    const d = embedded as Deployment;
    expect(d.server.output()).toContain(`connecting through its Unix socket ${pgDir}/.s.PGSQL.${port}`);
    await activateAndValidate(d);
    const backends = await backendsOf(adminUrl, 'licence_server');
    expect(backends.socket).toBeGreaterThan(0);
    expect(backends.tcp).toBe(0);
  });

  it('serves the client API with DATABASE_URL=postgresql://...@/db?host=<socket folder>&port=N, over the socket only', async () => {
    const database = `licence_socket_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    second = await startDeployment(
      { DATABASE_URL: `postgresql://postgres:${encodeURIComponent(password)}@/${database}?host=${encodeURIComponent(pgDir)}&port=${port}` },
      { database: 'given' },
    );
    await activateAndValidate(second);
    const backends = await backendsOf(adminUrl, database);
    expect(backends.socket).toBeGreaterThan(0);
    expect(backends.tcp).toBe(0);
  }, 180_000);
});
