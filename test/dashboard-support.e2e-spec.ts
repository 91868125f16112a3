import { Agent, loggedInAgent, unescape } from './dashboard-helpers';
import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/**
 * The licence page for the ticket "my key stopped working on my new laptop" (docs/dashboard.md, Tasks): the machines
 * and the client's recent events first, a banner naming the refused machine with a prefilled release, the signed
 * preview folded away.
 */
describe('dashboard: the support-first licence page', () => {
  let t: TestApp;
  let agent: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    agent = (await loggedInAgent(t)).agent;
  }, 60_000);
  afterAll(() => t.close());

  const activate = (license_key: string, machine: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key, machine_fingerprint: fingerprint(machine), hostname: machine });

  it('a refused new machine: a banner with its name and code, one click to the release of the oldest machine', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    await activate(lic.license_key, 'old-laptop').expect(200);
    expect((await agent.get(`/licenses/${lic.id}`).expect(200)).text).not.toContain('data-testid="refused-banner"');

    expect((await activate(lic.license_key, 'new-laptop').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
    const page = await agent.get(`/licenses/${lic.id}`).expect(200);
    const banner = /data-testid="refused-banner">([\s\S]*?)<\/div>/.exec(page.text)?.[1] ?? '';
    expect(banner).toContain('<strong>new-laptop</strong>');
    expect(banner).toContain('ALREADY_ACTIVATED');
    const href = unescape(/href="([^"]+)" data-testid="refused-release"/.exec(banner)?.[1] ?? '');
    expect(href).toBe(`/licenses/${lic.id}/confirm/release?machine_fingerprint=${encodeURIComponent(fingerprint('old-laptop'))}`);
    expect(banner).toContain('Release old-laptop…');

    // The click: the release confirmation for that machine, ready to confirm.
    const confirm = await agent.get(href).expect(200);
    expect(confirm.text).toContain('old-laptop');

    // The machines and the client's events come before the licence's fields; the refusal is listed with its code.
    const order = ['data-testid="refused-banner"', 'id="seats-heading"', 'data-testid="client-events"', 'id="licence-heading"'].map((m) =>
      page.text.indexOf(m),
    );
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const events = /data-testid="client-events"[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? '';
    expect(events).toContain('ALREADY_ACTIVATED');
    // The signed preview is folded away.
    expect(page.text).toMatch(/<details data-testid="preview-details">\s*<summary><h2 id="preview-heading"/);
  });

  it('no banner once the refused machine holds a seat, or when no seat could be released', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    await activate(lic.license_key, 'first').expect(200);
    await activate(lic.license_key, 'second').expect(400);
    expect((await agent.get(`/licenses/${lic.id}`).expect(200)).text).toContain('data-testid="refused-banner"');
    await t.admin
      .post(`/api/v1/admin/licenses/${lic.id}/release`)
      .send({ machine_fingerprint: fingerprint('first') })
      .expect(200);
    expect((await agent.get(`/licenses/${lic.id}`).expect(200)).text).not.toContain('data-testid="refused-banner"');
    await activate(lic.license_key, 'second').expect(200);
    expect((await agent.get(`/licenses/${lic.id}`).expect(200)).text).not.toContain('data-testid="refused-banner"');
  });

  it('attacker: a hostile hostname in the refusal is escaped in the banner', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    await activate(lic.license_key, 'bound').expect(200);
    await activate(lic.license_key, '<img src=x onerror=alert(1)>').expect(400);
    const page = await agent.get(`/licenses/${lic.id}`).expect(200);
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('data-testid="refused-banner"');
  });
});
