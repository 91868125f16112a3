import { type Agent, loggedInAgent, unescape } from './dashboard-helpers';
import { asBearer, createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/**
 * Many trials from one IP address (docs/licences.md, Trials; docs/dashboard.md, Pages): the licence list's
 * trial_ip filter (admin API and dashboard) and the statistics page's trials by IP over the last 24 hours.
 */
describe('trials by IP address', () => {
  let t: TestApp;
  let agent: Agent;
  const products: { id: number; code: string }[] = [];
  const BUSY = '198.51.100.7';
  const QUIET = '198.51.100.8';

  beforeAll(async () => {
    // Behind a proxy on loopback, so X-Forwarded-For names the client as it would in production.
    t = await createTestApp({ trustProxy: 'loopback' });
    for (const [code, prefix] of [
      ['TRIAL_IP_A', 'TIA'],
      ['TRIAL_IP_B', 'TIB'],
    ]) {
      const res = await t.admin
        .post('/api/v1/admin/products')
        .send({ code, name: code, key_prefix: prefix, trial: { days: 7 } })
        .expect(201);
      products.push(res.body as { id: number; code: string });
    }
    const start = (product: string, from: string, machine: string) =>
      t
        .http()
        .post('/api/v1/trials')
        .set('X-Forwarded-For', from)
        .send({ product, machine_fingerprint: fingerprint(machine), hostname: machine })
        .expect(201);
    await start('TRIAL_IP_A', BUSY, 'busy-1');
    await start('TRIAL_IP_A', BUSY, 'busy-2');
    await start('TRIAL_IP_B', BUSY, 'busy-3');
    await start('TRIAL_IP_A', QUIET, 'quiet-1');
    // A trial from two days ago counts on the list, not in the last 24 hours.
    await start('TRIAL_IP_B', QUIET, 'quiet-old');
    await t.sql(`UPDATE trials SET created_at = now() - interval '2 days' WHERE machine_fingerprint = $1`, [fingerprint('quiet-old')]);
    // A TRIAL licence staff made is not a self-service trial: no filter by IP finds it.
    await createLicense(t, { product_code: 'TRIAL_IP_A', license_type: 'TRIAL', customer_name: 'busy-staff' });
    agent = (await loggedInAgent(t)).agent;
  }, 60_000);
  afterAll(() => t.close());

  const names = (body: unknown) => (body as { customer_name: string }[]).map((l) => l.customer_name).sort();

  it('admin API: trial_ip lists the self-service trials started from that address, across products', async () => {
    expect(names((await t.admin.get(`/api/v1/admin/licenses?trial_ip=${BUSY}`).expect(200)).body)).toEqual(['busy-1', 'busy-2', 'busy-3']);
    expect(names((await t.admin.get(`/api/v1/admin/licenses?trial_ip=${QUIET}`).expect(200)).body)).toEqual(['quiet-1', 'quiet-old']);
    expect(names((await t.admin.get(`/api/v1/admin/licenses?trial_ip=${BUSY}&product=TRIAL_IP_B`).expect(200)).body)).toEqual(['busy-3']);
    expect((await t.admin.get('/api/v1/admin/licenses?trial_ip=203.0.113.1').expect(200)).body).toEqual([]);
  });

  it('admin API: an address that is not an IP is 400 VALIDATION_ERROR naming trial_ip', async () => {
    for (const bad of ['not-an-ip', '198.51.100.7%27--', '1.2.3.4.5', "198.51.100.7' OR '1'='1"]) {
      const res = await t.admin.get(`/api/v1/admin/licenses?trial_ip=${encodeURIComponent(bad)}`).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error.details)).toContain('trial_ip');
    }
  });

  it("attacker: a token limited to one product never sees another product's trials through trial_ip", async () => {
    const token = (
      await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: 'trial-ip-reader', scopes: ['licenses:read'], products: ['TRIAL_IP_A'] })
        .expect(201)
    ).body as { token: string };
    const limited = asBearer(t, token.token);
    expect(names((await limited.get(`/api/v1/admin/licenses?trial_ip=${BUSY}`).expect(200)).body)).toEqual(['busy-1', 'busy-2']);
    expect((await limited.get(`/api/v1/admin/licenses?trial_ip=${BUSY}&product=TRIAL_IP_B`).expect(200)).body).toEqual([]);
  });

  it('statistics page: trials by IP over the last 24 hours, most first, each linked to its trials', async () => {
    const page = await agent.get('/dashboard').expect(200);
    const section = /data-testid="trial-ips"[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? '';
    const rows = [
      ...section.matchAll(
        /data-testid="trial-ip-row"><th scope="row"><a class="mono" href="([^"]+)">([^<]+)<\/a><\/th><td[^>]*>(\d+)<\/td><td[^>]*>(\d+)<\/td>/g,
      ),
    ].map((m) => ({ href: unescape(m[1]), ip: m[2], trials: Number(m[3]), products: Number(m[4]) }));
    expect(rows).toEqual([
      { href: `/licenses?trial_ip=${BUSY}`, ip: BUSY, trials: 3, products: 2 },
      { href: `/licenses?trial_ip=${QUIET}`, ip: QUIET, trials: 1, products: 1 },
    ]);
    // Each product's card counts its trials and conversions.
    const started = [...page.text.matchAll(/data-testid="trials-started">(\d+)</g)].map((m) => Number(m[1]));
    expect(started.reduce((a, b) => a + b, 0)).toBe(5);
  });

  it('licence list: the trials filter shows that address’s trials and keeps the filter in the URL; a bad address is ignored and named', async () => {
    const list = await agent.get(`/licenses?trial_ip=${BUSY}`).expect(200);
    expect(list.text).toContain(`Trials from ${BUSY}`);
    expect(list.text).toContain(`name="trial_ip" value="${BUSY}"`);
    for (const name of ['busy-1', 'busy-2', 'busy-3']) expect(list.text).toContain(name);
    expect(list.text).not.toContain('quiet-1');
    expect(list.text).not.toContain('busy-staff');
    expect(unescape(list.text)).toContain(`trial_ip=${BUSY}`);

    const bad = await agent.get('/licenses?trial_ip=%3Cscript%3Ealert(1)%3C%2Fscript%3E').expect(200);
    expect(bad.text).toContain('Ignored a filter');
    expect(bad.text).not.toContain('<script>alert(1)</script>');
    expect(bad.text).toContain('busy-staff');
  });
});
