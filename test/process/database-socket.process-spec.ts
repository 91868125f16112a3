import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../../src/database/embedded-database';
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
  const seat = { license_key: license.license_key, machine_fingerprint: `socket-${randomBytes(8).toString('hex')}` };
  const post = (path: string, body: object) =>
    d.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const activated = await post('/api/v1/activate', { ...seat, hostname: 'socket-host' });
  expect(activated.status).toBe(200);
  expect(((await activated.json()) as { signature: string }).signature).toMatch(/^RSA-SHA256:/);
  const validated = await post('/api/v1/validate', seat);
  expect(await validated.json()).toMatchObject({ valid: true, status: 'active' });
}

/**
 * The server reaching PostgreSQL through its Unix-domain socket (docs/configuration.md, Database URL): with a
 * DATABASE_URL of the form `postgresql://user:pw@/db?host=/folder&port=N`, and by default with the embedded PostgreSQL,
 * whose socket lives in its data folder. Every backend the server opens is then a socket connection (client_port -1).
 */
describe('the server on a Unix-socket DATABASE_URL', () => {
  const work = mkdtempSync(join(tmpdir(), 'licence-socket-'));
  // As root, the test's PostgreSQL runs as the postgres OS user, which must be able to enter the folder.
  chmodSync(work, 0o711);
  let db: EmbeddedDatabase;
  let d: Deployment | undefined;

  beforeAll(async () => {
    db = await EmbeddedDatabase.start({ dir: join(work, 'pg'), secretsDir: work });
  }, 120_000);
  afterEach(async () => {
    await d?.stop();
    d = undefined;
  }, 60_000);
  afterAll(async () => {
    await db?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it('serves the client API with DATABASE_URL=postgresql://...@/db?host=<socket folder>, over the socket only', async () => {
    const url = await db.ensureDatabase('licence_socket_url');
    expect(db.socket.dir).toBe(join(work, 'pg'));
    expect(url).toMatch(/^postgresql:\/\/postgres:[^@]+@\/licence_socket_url\?host=%2F.+&port=\d+$/);
    d = await startDeployment({ DATABASE_URL: url }, { database: 'given' });
    await activateAndValidate(d);
    const backends = await backendsOf(db.url, 'licence_socket_url');
    expect(backends.socket).toBeGreaterThan(0);
    expect(backends.tcp).toBe(0);
  }, 180_000);

  it('connects to the embedded PostgreSQL (DATABASE_URL unset) through the socket in its data folder, TCP left for tools', async () => {
    d = await startDeployment({}, { database: 'given' });
    const pgDir = join(d.env.DATA_DIR, 'postgres');
    expect(d.server.output()).toContain(`connecting through its Unix socket ${pgDir}/.s.PGSQL.`);
    await activateAndValidate(d);
    // A tool reaches the same server over loopback TCP: the port from postmaster.pid, the generated password.
    const port = readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[3];
    const password = encodeURIComponent(readFileSync(join(d.env.DATA_DIR, 'postgres-password'), 'utf8').trim());
    const backends = await backendsOf(`postgres://postgres:${password}@127.0.0.1:${port}/postgres`, 'licence_server');
    expect(backends.socket).toBeGreaterThan(0);
    expect(backends.tcp).toBe(0);
  }, 180_000);
});
