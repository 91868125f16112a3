import { Client } from 'pg';
import { startServer, ServerProcess } from '../support/server-process';
import { fingerprint } from '../support/factories';
import { ClusterEnv, createClusterEnv } from './cluster-env';

/**
 * Two real server processes on two ports, one PostgreSQL, one Redis: what a load-balanced
 * deployment shares must be shared (docs/deployment.md, What the instances share, and where it lives; issue 6).
 */
describe('two instances behind a load balancer', () => {
  let cluster: ClusterEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let ipCounter = 0;
  const clientIp = () => `198.51.100.${++ipCounter}`;

  beforeAll(async () => {
    cluster = await createClusterEnv();
    // Start one first so it applies the migrations; the second finds them applied (both would be safe).
    a = await startServer(cluster.env);
    b = await startServer(cluster.env);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.cleanup();
  });

  const post = (server: ServerProcess, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  async function createLicense(server: ServerProcess, limits?: Record<string, number>): Promise<{ id: number; license_key: string }> {
    const res = await post(
      server,
      '/api/v1/admin/licenses',
      { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Cluster Co', ...(limits ? { limits } : {}) },
      { 'x-api-key': cluster.apiKey },
    );
    expect(res.status).toBe(201);
    return (await res.json()) as { id: number; license_key: string };
  }

  it('both report healthy with database and Redis up', async () => {
    for (const server of [a, b]) {
      const res = await fetch(`${server.url}/api/v1/health`);
      expect(await res.json()).toEqual({ status: 'ok', database: 'up', redis: 'up' });
    }
  });

  it('refuses the 11th activation from one IP within a minute even when requests alternate between instances', async () => {
    const ip = clientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await post(
        i % 2 ? b : a,
        '/api/v1/activate',
        { license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: fingerprint(i), hostname: 'h' },
        { 'x-forwarded-for': ip },
      );
      statuses.push(res.status);
      if (i === 10) expect(((await res.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    }
    expect(statuses.slice(0, 10).every((s) => s === 400)).toBe(true);
    expect(statuses[10]).toBe(429);
    // Another client IP is unaffected on either instance.
    const other = await post(
      b,
      '/api/v1/activate',
      { license_key: 'POS-00000-00000-00000-00000', machine_fingerprint: fingerprint('x'), hostname: 'h' },
      { 'x-forwarded-for': clientIp() },
    );
    expect(other.status).toBe(400);
  });

  it('a dashboard session created on one instance works on the other', async () => {
    const loginPage = await fetch(`${a.url}/login`);
    const preCookie = (loginPage.headers.get('set-cookie') ?? '').split(';')[0];
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await loginPage.text())?.[1] ?? '';
    expect(csrf).not.toBe('');
    const login = await fetch(`${a.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: preCookie, 'x-forwarded-for': clientIp() },
      body: new URLSearchParams({ username: 'admin', password: cluster.env.ADMIN_PASSWORD, _csrf: csrf }).toString(),
    });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/dashboard');
    const session = (login.headers.get('set-cookie') ?? '').split(';')[0];
    expect(session).toMatch(/^licence_session=/);
    // Kept in Redis under the deployment's prefix, expiring with the cookie (8 h).
    const sid = decodeURIComponent(session.slice('licence_session='.length)).slice(2).split('.')[0];
    const ttl = await cluster.redis.ttl(`sess:${sid}`);
    expect(ttl).toBeGreaterThan(8 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(8 * 3600);
    // Same cookie, other instance: still logged in.
    const onB = await fetch(`${b.url}/dashboard`, { redirect: 'manual', headers: { cookie: session } });
    expect(onB.status).toBe(200);
    expect(await onB.text()).toContain('admin');
    // Without it, the other instance sends the browser to the login page.
    const anonymous = await fetch(`${b.url}/dashboard`, { redirect: 'manual' });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe('/login');
  });

  it('a seat taken through one instance is seen by the other', async () => {
    const license = await createLicense(a);
    const fp1 = fingerprint('cluster-seat-1');
    const fp2 = fingerprint('cluster-seat-2');
    const activated = await post(
      a,
      '/api/v1/activate',
      { license_key: license.license_key, machine_fingerprint: fp1, hostname: 'till-1' },
      { 'x-forwarded-for': clientIp() },
    );
    expect(activated.status).toBe(200);
    const validated = await post(
      b,
      '/api/v1/validate',
      { license_key: license.license_key, machine_fingerprint: fp1 },
      { 'x-forwarded-for': clientIp() },
    );
    expect(await validated.json()).toMatchObject({ valid: true, status: 'active', code: null });
    const second = await post(
      b,
      '/api/v1/activate',
      { license_key: license.license_key, machine_fingerprint: fp2, hostname: 'till-2' },
      { 'x-forwarded-for': clientIp() },
    );
    expect(second.status).toBe(400);
    expect(((await second.json()) as { error: unknown }).error).toMatchObject({
      code: 'ALREADY_ACTIVATED',
      details: { activated_on: 'till-1' },
    });
  });

  it('concurrent activations of one seat through both instances: exactly one wins', async () => {
    const license = await createLicense(a);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(
          i % 2 ? a : b,
          '/api/v1/activate',
          { license_key: license.license_key, machine_fingerprint: fingerprint(`race-${i}`), hostname: `m${i}` },
          { 'x-forwarded-for': clientIp() },
        ),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
  });

  it('killing one instance under load loses no committed activation', async () => {
    const licenses = await Promise.all(Array.from({ length: 60 }, () => createLicense(b)));
    const outcomes: { key: string; fp: string; status: number | 'network-error' }[] = [];
    let sent = 0;
    const victim = await startServer(cluster.env);
    const worker = async () => {
      while (sent < licenses.length) {
        const license = licenses[sent++];
        const fp = fingerprint(`crash-${license.id}`);
        const server = sent % 2 ? victim : b;
        try {
          const res = await post(
            server,
            '/api/v1/activate',
            { license_key: license.license_key, machine_fingerprint: fp, hostname: 'crash-test' },
            { 'x-forwarded-for': clientIp() },
          );
          outcomes.push({ key: license.license_key, fp, status: res.status });
        } catch {
          outcomes.push({ key: license.license_key, fp, status: 'network-error' });
        }
      }
    };
    const load = Promise.all(Array.from({ length: 6 }, worker));
    await new Promise((r) => setTimeout(r, 150));
    await victim.stop('SIGKILL');
    await load;

    const client = new Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    try {
      for (const o of outcomes) {
        const { rows } = await client.query(
          `SELECT count(s.id)::int AS seats,
                  (SELECT count(*)::int FROM audit_entries e WHERE e.license_id = l.id AND e.action = 'license.activated') AS audits
           FROM licenses l LEFT JOIN activations s ON s.license_id = l.id AND s.released_at IS NULL AND s.machine_fingerprint = $2
           WHERE l.license_key = $1 GROUP BY l.id`,
          [o.key, o.fp],
        );
        if (o.status === 200) expect(rows[0]).toEqual({ seats: 1, audits: 1 });
        else if (o.status !== 'network-error') expect(rows[0]).toEqual({ seats: 0, audits: 0 });
        // A network error is indeterminate for the client: either outcome is acceptable, but never half of one.
        else expect(rows[0].seats).toBe(rows[0].audits);
      }
    } finally {
      await client.end();
    }
    expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThan(0);
  });
});
