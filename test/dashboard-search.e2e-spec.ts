import { Agent, loggedInAgent } from './dashboard-helpers';
import { createLicense, fingerprint, insertSeat } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/** The top bar's search (docs/dashboard.md, Find a licence or a customer): one match opens the licence. */
describe('dashboard: search from the top bar', () => {
  let t: TestApp;
  let agent: Agent;
  let dorde: { id: number; license_key: string };

  beforeAll(async () => {
    t = await createTestApp();
    dorde = await createLicense(t, { customer_name: 'Đorđe Petrović', customer_email: 'dorde@primer.rs' });
    await createLicense(t, { customer_name: 'Twin Search One' });
    await createLicense(t, { customer_name: 'Twin Search Two' });
    await insertSeat(t, dorde.id, { hostname: 'kasa-novi-sad-07', machine_fingerprint: fingerprint('search-seat') });
    agent = (await loggedInAgent(t)).agent;
  }, 60_000);
  afterAll(() => t.close());

  const searchFor = (q: string) => agent.get(`/licenses/search?q=${encodeURIComponent(q)}`).expect(303);

  it('every page has the search box submitting to /licenses/search, with "/" as its shortcut', async () => {
    const page = await agent.get('/dashboard').expect(200);
    expect(page.text).toContain('<form class="topbar-search" method="get" action="/licenses/search" role="search">');
    expect(page.text).toContain('aria-keyshortcuts="/"');
  });

  it.each([
    ['the name as written', 'Đorđe Petrović'],
    ['the name without diacritics', 'dorde petrovic'],
    ['đ typed as dj', 'Djordje Petrovic'],
    ['the e-mail', 'DORDE@primer'],
    ['a hostname', 'novi-sad-07'],
  ])('one match opens the licence: %s', async (_label, q) => {
    await searchFor(q).expect('Location', `/licenses/${dorde.id}`);
  });

  it('the key without dashes opens the licence', async () => {
    await searchFor(dorde.license_key.replace(/-/g, '').toLowerCase()).expect('Location', `/licenses/${dorde.id}`);
  });

  it('several matches, or none, show the list for the same search', async () => {
    await searchFor('twin search').expect('Location', '/licenses?q=twin+search');
    await searchFor('nobody at all').expect('Location', '/licenses?q=nobody+at+all');
  });

  it('an empty search is the whole list; a search the list refuses shows it there with the message', async () => {
    await agent.get('/licenses/search?q=').expect(303).expect('Location', '/licenses');
    await agent.get('/licenses/search').expect(303).expect('Location', '/licenses');
    const long = 'x'.repeat(201);
    await searchFor(long).expect('Location', `/licenses?q=${long}`);
    expect((await agent.get(`/licenses?q=${long}`).expect(200)).text).toContain('Ignored a filter');
  });

  it('attacker: without a session the search answers the sign-in redirect and reveals nothing', async () => {
    const res = await t.http().get(`/licenses/search?q=${encodeURIComponent('Đorđe')}`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/login');
  });
});
