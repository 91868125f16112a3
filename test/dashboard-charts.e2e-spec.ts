import { Agent, openDashboard } from './dashboard-helpers';
import { createLicense, fingerprint } from './support/factories';
import type { TestApp } from './support/test-app';

jest.setTimeout(60_000);

/** The statistics page's chart of activations, refusals and new licences per UTC day (docs/dashboard.md, Charts). */
describe('dashboard: charts on the statistics page', () => {
  let t: TestApp;
  let agent: Agent;

  beforeAll(async () => {
    ({ t, agent } = await openDashboard());
  }, 60_000);
  afterAll(() => t.close());

  const utcDay = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
  /** The chart's table in the page's section `section` (a data-testid) as day → the row's numbers. */
  const chartTable = async (path = '/dashboard', section = 'daily-chart') => {
    const page = (await agent.get(path).expect(200)).text;
    const html = page.slice(page.indexOf(`data-testid="${section}"`)).split('</section>')[0];
    const rows = [...html.matchAll(/<tr data-testid="daily-row"><th scope="row" data-day="([\d-]+)">[\d-]+<\/th>(.*?)<\/tr>/g)];
    return new Map(rows.map(([, day, cells]) => [day, [...cells.matchAll(/class="num">(\d+)<\/td>/g)].map((m) => Number(m[1]))]));
  };

  it('counts the real activations, refusals and new licences of today from the audit log, with a row for each of 30 days', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    const activate = (machine: string) =>
      t
        .http()
        .post('/api/v1/activate')
        .send({ license_key: lic.license_key, machine_fingerprint: fingerprint(machine), hostname: machine });
    await activate('till-1').expect(200);
    await activate('till-2').expect(400);
    await activate('till-3').expect(400);
    const table = await chartTable();
    expect([...table.keys()]).toHaveLength(30);
    expect([...table.keys()][0]).toBe(utcDay(29));
    expect([...table.keys()][29]).toBe(utcDay(0));
    expect(table.get(utcDay(0))).toEqual([1, 2, 1]);
    expect(table.get(utcDay(1))).toEqual([0, 0, 0]);
  });

  it('puts older entries on their UTC day and leaves out those older than 30 days and other actions', async () => {
    const lic = await createLicense(t);
    const insert = (action: string, daysAgo: number) =>
      t.sql(
        `INSERT INTO audit_entries (created_at, action, actor_type, license_id, details) VALUES (date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - $1 * interval '1 day' + interval '12 hours', $2, 'client', $3, '{}')`,
        [daysAgo, action, lic.id],
      );
    await insert('license.activated', 3);
    await insert('license.activated', 3);
    await insert('license.activation_denied', 29);
    await insert('license.activated', 30);
    await insert('license.deactivated', 3);
    const table = await chartTable();
    expect(table.get(utcDay(3))).toEqual([2, 0, 0]);
    expect(table.get(utcDay(29))).toEqual([0, 1, 0]);
    expect(table.has(utcDay(30))).toBe(false);
  });

  it("charts one licence's own activations and refusals on its page, with its seats in use vs allowed", async () => {
    const lic = await createLicense(t, { limits: { max_installations: 2 } });
    const other = await createLicense(t, { limits: { max_installations: 1 } });
    const activate = (key: string, machine: string) =>
      t
        .http()
        .post('/api/v1/activate')
        .send({ license_key: key, machine_fingerprint: fingerprint(machine), hostname: machine });
    await activate(lic.license_key, 'kasa-1').expect(200);
    await activate(other.license_key, 'other-1').expect(200);
    await activate(other.license_key, 'other-2').expect(400);
    const table = await chartTable(`/licenses/${lic.id}`, 'license-chart');
    expect(table.size).toBe(30);
    // Two series (activations, refusals), only this licence's entries.
    expect(table.get(utcDay(0))).toEqual([1, 0]);
    expect((await chartTable(`/licenses/${other.id}`, 'license-chart')).get(utcDay(0))).toEqual([1, 1]);
    const html = (await agent.get(`/licenses/${lic.id}`).expect(200)).text;
    expect(html).toMatch(/<meter id="seat-meter" min="0" max="2" value="1"[^>]*>1 of 2<\/meter>/);
    expect(html).toContain('Seats in use: 1 of 2');
  });

  it('charts the usable licences expiring per UTC day, today and the next 29 days, from the stats module', async () => {
    const at = async (hoursFromNow: number, change?: string) => {
      const lic = await createLicense(t, { license_type: 'MONTHLY' });
      await t.sql(`UPDATE licenses SET expires_at = now() + $2 * interval '1 hour' ${change ? `, ${change}` : ''} WHERE id = $1`, [
        lic.id,
        hoursFromNow,
      ]);
    };
    const inDays = (days: number) => utcDay(-days);
    const dayOf = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString().slice(0, 10);
    await at(50);
    await at(50);
    await at(51, 'active = false');
    await at(52, 'revoked = true');
    await at(-1);
    await at(24 * 31);
    const table = await chartTable('/dashboard', 'expiring-panel');
    expect(table.size).toBe(30);
    expect([...table.keys()][0]).toBe(utcDay(0));
    expect([...table.keys()][29]).toBe(inDays(29));
    const counted = [...table.values()].reduce((sum, [n]) => sum + n, 0);
    // Other tests' licences expire in a year: only the two usable ones in 50 hours count.
    expect(counted).toBe(2);
    expect(table.get(dayOf(50))).toEqual([2]);
  });

  it('serves the charting library from its own origin under the strict CSP', async () => {
    const html = (await agent.get('/dashboard').expect(200)).text;
    expect(html).toContain('<script src="/assets/vendor/uplot.js" defer></script>');
    const script = await t.http().get('/assets/vendor/uplot.js').expect(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.text).toContain('uPlot');
    await t.http().get('/assets/vendor/uplot.css').expect(200).expect('Content-Type', /css/);
    // Only the two files: nothing else of the package or of node_modules is reachable.
    await t.http().get('/assets/vendor/uPlot.esm.js').expect(404);
    await t.http().get('/assets/vendor/../package.json').expect(404);
    const csp = script.headers['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*(unsafe-inline|https?:)/);
  });

  it('keeps the chart behind the login', async () => {
    await t.http().get('/dashboard').expect(302).expect('Location', '/login');
  });
  it("the per-product panel shows one product's day with the daily statistics' five columns and its week and month totals", async () => {
    await t.admin.post('/api/v1/admin/products').send({ code: 'CHART_P', name: 'Chart product', key_prefix: 'CP' }).expect(201);
    const lic = await createLicense(t, { product_code: 'CHART_P', limits: { max_installations: 1 } });
    const activate = (machine: string) =>
      t
        .http()
        .post('/api/v1/activate')
        .send({ license_key: lic.license_key, machine_fingerprint: fingerprint(machine), hostname: machine });
    await activate('panel-1').expect(200);
    await activate('panel-2').expect(400);
    await t
      .http()
      .post('/api/v1/deactivate')
      .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('panel-1') })
      .expect(200);
    const table = await chartTable('/dashboard?product=chart_p', 'product-daily');
    expect([...table.keys()]).toHaveLength(30);
    // Activations, refusals, deactivations, trials, new licences.
    expect(table.get(utcDay(0))).toEqual([1, 1, 1, 0, 1]);
    const page = (await agent.get('/dashboard?product=CHART_P').expect(200)).text;
    const panel = page.slice(page.indexOf('data-testid="product-daily"')).split('</section>')[0];
    expect(panel).toContain('Per day: CHART_P');
    expect(panel).toMatch(/<option value="CHART_P" selected>/);
    const totals = [...panel.matchAll(/<tr><th scope="row">(Last \d+ days)<\/th>(.*?)<\/tr>/g)].map(([, period, cells]) => [
      period,
      [...cells.matchAll(/class="num">(\d+)<\/td>/g)].map((m) => Number(m[1])),
    ]);
    expect(totals).toEqual([
      ['Last 7 days', [1, 1, 1, 0, 1]],
      ['Last 30 days', [1, 1, 1, 0, 1]],
    ]);
    // An unknown code (or none) shows every product, escaped, never an error page.
    const unknown = (await agent.get('/dashboard?product=%3Cscript%3E').expect(200)).text;
    expect(unknown).toContain('Per day: all products');
    expect(unknown).not.toContain('<script>');
  });
});
