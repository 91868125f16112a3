import { Agent, flashOf, openDashboard, postFields, unescape } from './dashboard-helpers';
import type { TestApp } from './support/test-app';

jest.setTimeout(60_000);

/** Saved views of the licence list (docs/dashboard.md, Saved views): shared, named, one text per view, at most 50. */
describe('dashboard: saved views', () => {
  let t: TestApp;
  let agent: Agent;
  let csrf: string;

  beforeAll(async () => {
    ({ t, agent, token: csrf } = await openDashboard());
  }, 60_000);
  afterAll(() => t.close());
  beforeEach(() => t.sql('DELETE FROM saved_views'));

  const post = (url: string, fields: [string, string][], token = csrf) => postFields(agent, token, url, fields);
  const flash = (url: string) => flashOf(agent, url);
  const views = () =>
    t.sql<{ id: number; name: string; query: string; author: string }>('SELECT id, name, query, author FROM saved_views ORDER BY id');
  const links = (html: string) =>
    [...unescape(html).matchAll(/<li data-testid="saved-view">\s*<a href="([^"]+)"( aria-current="page")?[^>]*>([^<]*)<\/a>/g)].map(
      (m) => ({ href: m[1], current: !!m[2], name: m[3] }),
    );

  it('saves the view shown (its filters, sort and size, not its page), lists it for staff and marks it when shown', async () => {
    const page = (await agent.get('/licenses?status=active&product=POS_RETAIL&sort=expires_at&dir=asc&size=50&page=2').expect(200)).text;
    expect(page).toContain('data-testid="save-view"');
    const res = await post('/licenses/views', [
      ['name', 'POS by expiry'],
      ['status', 'active'],
      ['product', 'POS_RETAIL'],
      ['sort', 'expires_at'],
      ['dir', 'asc'],
      ['size', '50'],
      ['page', '2'],
    ]).expect(303);
    expect(res.headers.location).toBe('/licenses?product=POS_RETAIL&status=active&size=50&sort=expires_at&dir=asc');
    expect(await flash(res.headers.location)).toEqual(['success', 'View “POS by expiry” saved.']);
    expect(await views()).toEqual([
      {
        id: expect.any(Number),
        name: 'POS by expiry',
        query: 'dir=asc&product=POS_RETAIL&size=50&sort=expires_at&status=active',
        author: 'admin',
      },
    ]);
    // The same view in another field order is the same view: marked as shown.
    const shown = await agent.get('/licenses?sort=expires_at&status=active&dir=asc&size=50&product=POS_RETAIL').expect(200);
    expect(links(shown.text)).toEqual([
      { href: '/licenses?dir=asc&product=POS_RETAIL&size=50&sort=expires_at&status=active', current: true, name: 'POS by expiry' },
    ]);
    expect(links((await agent.get('/licenses').expect(200)).text)[0].current).toBe(false);
    // The link shows the same list.
    await agent.get('/licenses?dir=asc&product=POS_RETAIL&size=50&sort=expires_at&status=active').expect(200);
  });

  it('saving a name again replaces its view; views are listed by name', async () => {
    await post('/licenses/views', [
      ['name', 'Zeta'],
      ['status', 'active'],
    ]).expect(303);
    await post('/licenses/views', [
      ['name', 'alpha'],
      ['q', 'pekara'],
    ]).expect(303);
    await post('/licenses/views', [
      ['name', 'Zeta'],
      ['status', 'suspended'],
    ]).expect(303);
    expect((await views()).map((v) => [v.name, v.query])).toEqual([
      ['Zeta', 'status=suspended'],
      ['alpha', 'q=pekara'],
    ]);
    expect(links((await agent.get('/licenses').expect(200)).text).map((l) => l.name)).toEqual(['alpha', 'Zeta']);
  });

  it('deletes a view; an unknown one is a 404 page', async () => {
    await post('/licenses/views', [
      ['name', 'Gone soon'],
      ['status', 'active'],
    ]).expect(303);
    const [view] = await views();
    const res = await post(`/licenses/views/${view.id}/delete`, []).expect(303);
    expect(await flash(res.headers.location)).toEqual(['success', 'View deleted.']);
    expect(await views()).toEqual([]);
    await post(`/licenses/views/${view.id}/delete`, []).expect(404);
    await post('/licenses/views/abc/delete', []).expect(404);
  });

  it.each([
    ['empty', '   ', 'Give the view a name'],
    ['81 characters', 'v'.repeat(81), 'A view name has at most 80 characters'],
  ])('refuses a name that is %s with a message, saving nothing', async (_, name, message) => {
    const res = await post('/licenses/views', [
      ['name', name],
      ['status', 'active'],
    ]).expect(303);
    expect(res.headers.location).toBe('/licenses?status=active');
    expect(await flash(res.headers.location)).toEqual(['error', `The view was not saved: ${message}.`]);
    expect(await views()).toEqual([]);
  });

  it('keeps an 80-character name counted in characters, accents included', async () => {
    const name = 'Đ'.repeat(80);
    await post('/licenses/views', [
      ['name', name],
      ['status', 'active'],
    ]).expect(303);
    expect((await views())[0].name).toBe(name);
  });

  it('refuses a view with nothing in it', async () => {
    const res = await post('/licenses/views', [['name', 'Everything']]).expect(303);
    expect(await flash(res.headers.location)).toEqual(['error', 'The view was not saved: filter, sort or size the list first.']);
    expect(await views()).toEqual([]);
    expect((await agent.get('/licenses').expect(200)).text).not.toContain('data-testid="save-view"');
  });

  it('at most 50 views: a new name beyond is refused, replacing one still works', async () => {
    await t.sql(
      `INSERT INTO saved_views (name, query, author) SELECT 'view ' || n, 'status=active', 'admin' FROM generate_series(1, 50) n`,
    );
    const res = await post('/licenses/views', [
      ['name', 'one more'],
      ['status', 'active'],
    ]).expect(303);
    expect(await flash(res.headers.location)).toEqual(['error', 'The view was not saved: there are already 50 views; delete one first.']);
    await post('/licenses/views', [
      ['name', 'view 7'],
      ['status', 'expired'],
    ]).expect(303);
    expect((await views()).length).toBe(50);
    expect((await views()).find((v) => v.name === 'view 7')?.query).toBe('status=expired');
  });

  it('two staff saving the 50th and 51st view at once never pass 50', async () => {
    await t.sql(
      `INSERT INTO saved_views (name, query, author) SELECT 'seed ' || n, 'status=active', 'admin' FROM generate_series(1, 49) n`,
    );
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post('/licenses/views', [
          ['name', `race ${i}`],
          ['status', 'active'],
        ]).expect(303),
      ),
    );
    expect((await views()).length).toBe(50);
  });

  describe('attacker', () => {
    it('without the CSRF token nothing is saved or deleted (403)', async () => {
      await post(
        '/licenses/views',
        [
          ['name', 'Forged'],
          ['status', 'active'],
        ],
        'forged',
      ).expect(403);
      await post('/licenses/views', [
        ['name', 'Kept'],
        ['status', 'active'],
      ]).expect(303);
      const [view] = await views();
      await post(`/licenses/views/${view.id}/delete`, [], 'forged').expect(403);
      expect((await views()).map((v) => v.name)).toEqual(['Kept']);
    });

    it('without a session the routes go to the login page', async () => {
      await t.http().post('/licenses/views').type('form').send('name=x&status=active').expect(303).expect('Location', '/login');
      await t.http().post('/licenses/views/1/delete').type('form').send('').expect(303).expect('Location', '/login');
    });

    it('a value longer than 200 characters is a 400 page; control characters in a name are refused', async () => {
      await post('/licenses/views', [
        ['name', 'Long'],
        ['q', 'x'.repeat(201)],
      ]).expect(400);
      const res = await post('/licenses/views', [
        ['name', 'bad\u0007bell'],
        ['status', 'active'],
      ]).expect(303);
      expect((await flash(res.headers.location))?.[0]).toBe('error');
      expect(await views()).toEqual([]);
    });

    it('a hostile name and query are stored as text and escaped in the list', async () => {
      await post('/licenses/views', [
        ['name', '<img src=x onerror=alert(1)>'],
        ['q', '"><script>alert(1)</script>'],
      ]).expect(303);
      const html = (await agent.get('/licenses').expect(200)).text;
      expect(html).not.toContain('<img src=x');
      expect(html).not.toContain('<script>alert(1)</script>');
      expect(links(html)[0].href).toBe('/licenses?q=%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E');
    });

    it('unknown fields are not kept in a view', async () => {
      await post('/licenses/views', [
        ['name', 'Only known'],
        ['status', 'active'],
        ['evil', 'x'],
        ['page', '9'],
      ]).expect(303);
      expect((await views())[0].query).toBe('status=active');
    });
  });
});
