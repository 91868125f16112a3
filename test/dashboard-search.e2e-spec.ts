import { Agent, loggedInAgent, unescape } from './dashboard-helpers';
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

  describe('results as you type (an HTML fragment for the top bar)', () => {
    const suggest = async (q: string) => (await agent.get(`/licenses/search/suggest?q=${encodeURIComponent(q)}`).expect(200)).text;
    const links = (html: string) => [...html.matchAll(/data-testid="suggestion"><a href="(\/licenses\/\d+)"/g)].map((m) => m[1]);

    it('lists the first matches with links, without the layout, never cached', async () => {
      const res = await agent.get('/licenses/search/suggest?q=djordje').expect(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.text).not.toContain('<html');
      expect(links(res.text)).toEqual([`/licenses/${dorde.id}`]);
      expect(res.text).toContain('Đorđe Petrović');
      expect(links(await suggest('twin search'))).toHaveLength(2);
      expect(await suggest('nobody at all')).toContain('data-testid="suggestions-none"');
    });

    it('at most 8, with a link to all matches', async () => {
      for (let i = 0; i < 9; i++) await createLicense(t, { customer_name: `Many Match ${i}` });
      const html = await suggest('many match');
      expect(links(html)).toHaveLength(8);
      expect(unescape(html)).toContain('href="/licenses?q=many+match" data-testid="suggestions-all">All 9 matches');
    });

    it('nothing for fewer than 2 characters or a search the list refuses', async () => {
      expect((await suggest('d')).trim()).toBe('');
      expect((await suggest('')).trim()).toBe('');
      expect((await suggest('x'.repeat(201))).trim()).toBe('');
    });

    it('attacker: customer data is escaped in the fragment', async () => {
      await createLicense(t, { customer_name: 'Evil <img src=x onerror=alert(1)> Shop' });
      const html = await suggest('evil');
      expect(html).not.toContain('<img');
      expect(html).toContain('&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt;');
    });
  });

  it('the list offers page sizes; the size stays in the URL of every page and sort link', async () => {
    for (let i = 0; i < 30; i++) await createLicense(t, { customer_name: `Sized Row ${i}` });
    const rows = (html: string) => (html.match(/data-testid="license-row"/g) ?? []).length;
    const byDefault = await agent.get('/licenses?q=sized+row').expect(200);
    expect(rows(byDefault.text)).toBe(25);
    expect(byDefault.text).toMatch(/<option value="25" selected>25<\/option>/);
    const fifty = await agent.get('/licenses?q=sized+row&size=50').expect(200);
    expect(rows(fifty.text)).toBe(30);
    expect(fifty.text).toMatch(/<option value="50" selected>50<\/option>/);
    const hundred = unescape((await agent.get('/licenses?size=100').expect(200)).text);
    expect(hundred).toMatch(/href="\/licenses\?size=100&sort=customer_name&dir=asc"/);
    // Anything but an offered size is the default, never an error.
    for (const size of ['7', '100000', '-1', 'abc'])
      expect(rows((await agent.get(`/licenses?q=sized+row&size=${size}`).expect(200)).text)).toBe(25);
    const second = unescape((await agent.get('/licenses?q=sized+row&size=25&page=1').expect(200)).text);
    expect(second).toContain('href="/licenses?q=sized+row&page=2"');
  });

  it('attacker: without a session the search and its fragment answer the sign-in redirect and reveal nothing', async () => {
    for (const path of ['/licenses/search', '/licenses/search/suggest']) {
      const res = await t.http().get(`${path}?q=${encodeURIComponent('Đorđe')}`);
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/login');
      expect(res.text).not.toContain('Petrović');
    }
  });
});
