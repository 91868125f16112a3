import request from 'supertest';
import { createTestApp, TestApp } from './support/test-app';
import { ADMIN, csrfFrom, loggedInAgent } from './dashboard-helpers';

const PAGES = [
  '/',
  '/dashboard',
  '/licenses',
  '/licenses/new',
  '/licenses/1',
  '/licenses/999999',
  '/licenses/abc',
  '/audit',
  '/licenses/1/unknown',
  '/audit/x',
  '/webhooks',
  '/webhooks/1',
  '/webhooks/1/delete',
];
const ACTIONS = [
  '/logout',
  '/licenses',
  '/licenses/1/revoke',
  '/licenses/1/release',
  '/licenses/1/suspend',
  '/licenses/1/reinstate',
  '/webhooks',
  '/webhooks/1/deactivate',
  '/webhooks/1/activate',
  '/webhooks/1/rotate-secret',
  '/webhooks/1/delete',
  '/webhooks/1/deliveries/1/retry',
];

describe('dashboard: login, sessions, CSRF, headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const auditActions = async (action: string) =>
    t.sql<{ actor: string; actor_type: string; ip: string }>(
      `SELECT actor, actor_type, ip FROM audit_entries WHERE action = $1 ORDER BY id`,
      [action],
    );

  it('creates the first user from ADMIN_USERNAME / ADMIN_PASSWORD with an Argon2id hash', async () => {
    const users = await t.sql<{ username: string; password_hash: string }>('SELECT username, password_hash FROM users');
    expect(users).toHaveLength(1);
    expect(users[0].username).toBe('admin');
    expect(users[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it.each(PAGES)('GET %s without a session redirects to /login', async (path) => {
    const res = await t.http().get(path);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/login');
  });

  it.each(ACTIONS)('POST %s without a session redirects to /login and changes nothing', async (path) => {
    const before = await t.sql('SELECT count(*)::int AS n FROM licenses');
    const res = await t.http().post(path).type('form').send({ customer_name: 'X', reason: 'x' });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login');
    expect(await t.sql('SELECT count(*)::int AS n FROM licenses')).toEqual(before);
  });

  it('serves the login page to anyone, with a CSRF token and no-store caching', async () => {
    const res = await t
      .http()
      .get('/login')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(csrfFrom(res.text)).toMatch(/^[0-9a-f]{64,}$/);
    expect(res.text).toContain('name="username"');
  });

  it('rejects a wrong password and an unknown user with the same generic message, 401 and an audit entry', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const token = csrfFrom((await agent.get('/login')).text);
    const wrong = await agent.post('/login').type('form').send({ username: 'admin', password: 'wrong-password', _csrf: token }).expect(401);
    const unknown = await agent
      .post('/login')
      .type('form')
      .send({ username: 'nobody', password: 'wrong-password', _csrf: token })
      .expect(401);
    const empty = await agent.post('/login').type('form').send({ _csrf: token }).expect(401);
    for (const res of [wrong, unknown, empty]) expect(res.text).toContain('Invalid username or password.');
    expect(unknown.text).toContain('value="nobody"'); // the typed name is kept, the password never
    expect(wrong.text).not.toContain('wrong-password');
    const failures = await auditActions('auth.login_failed');
    expect(failures.map((f) => f.actor)).toEqual(expect.arrayContaining(['admin', 'nobody']));
    expect(failures.every((f) => f.actor_type === 'dashboard' && f.ip)).toBe(true);
    // Still not logged in.
    await agent.get('/dashboard').expect(302).expect('Location', '/login');
  });

  it('rejects array and oversized login fields without an error page', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const token = csrfFrom((await agent.get('/login')).text);
    await agent.post('/login').type('form').send(`username=admin&username=admin&password=x&_csrf=${token}`).expect(401);
    await agent
      .post('/login')
      .type('form')
      .send({ username: 'a'.repeat(5000), password: 'p'.repeat(10_000), _csrf: token })
      .expect(401);
  });

  it('logs in: a new session id, cookie flags, a user in the nav bar and an audit entry', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const page = await agent.get('/login');
    const anonymousCookie = page.headers['set-cookie'][0];
    expect(anonymousCookie).toMatch(/^licence_session=/);
    const res = await agent
      .post('/login')
      .type('form')
      .send({ ...ADMIN, _csrf: csrfFrom(page.text) })
      .expect(303)
      .expect('Location', '/dashboard');
    const cookie: string = res.headers['set-cookie'][0];
    expect(cookie.split(';')[0]).not.toBe(anonymousCookie.split(';')[0]); // session id regenerated at login
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i); // plain HTTP here
    const lifetime = Date.parse(/Expires=([^;]+)/i.exec(cookie)?.[1] ?? '') - Date.now();
    expect(lifetime).toBeGreaterThan(8 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(8 * 3600_000);
    const dashboard = await agent.get('/dashboard').expect(200);
    expect(dashboard.text).toContain('data-testid="current-user">admin<');
    const logins = await auditActions('auth.login');
    expect(logins.at(-1)).toMatchObject({ actor: 'admin', actor_type: 'dashboard' });
    expect((await t.sql('SELECT last_login_at FROM users'))[0].last_login_at).not.toBeNull();
    // Logged in users skip the login form.
    await agent.get('/login').expect(302).expect('Location', '/dashboard');
  });

  it('stores sessions in PostgreSQL', async () => {
    const { agent } = await loggedInAgent(t);
    await agent.get('/dashboard').expect(200);
    const rows = await t.sql<{ sess: { passport?: { user?: { username: string } } } }>('SELECT sess FROM session');
    expect(rows.some((r) => r.sess.passport?.user?.username === 'admin')).toBe(true);
  });

  it('logs in case-insensitively by user name', async () => {
    await loggedInAgent(t, { username: 'ADMIN', password: ADMIN.password });
  });

  it('marks the cookie Secure when the request came over HTTPS through a trusted proxy', async () => {
    const proxied = await createTestApp({ trustProxy: '1' });
    try {
      const res = await proxied.http().get('/login').set('X-Forwarded-Proto', 'https').expect(200);
      expect(res.headers['set-cookie'][0]).toMatch(/; Secure/i);
    } finally {
      await proxied.close();
    }
  });

  it('logs out: POST /logout destroys the session and records auth.logout', async () => {
    const { agent, token } = await loggedInAgent(t);
    const csrf = await token('/dashboard');
    const cookieSid = async () => (await t.sql('SELECT count(*)::int AS n FROM session'))[0].n as number;
    const before = await cookieSid();
    await agent.post('/logout').type('form').send({ _csrf: csrf }).expect(303).expect('Location', '/login');
    expect(await cookieSid()).toBe(before - 1);
    await agent.get('/dashboard').expect(302).expect('Location', '/login');
    expect((await auditActions('auth.logout')).at(-1)).toMatchObject({ actor: 'admin', actor_type: 'dashboard' });
  });

  it('refuses a POST without or with a wrong CSRF token: 403, nothing changes, the session survives', async () => {
    const { agent, token } = await loggedInAgent(t);
    const csrf = await token('/dashboard');
    const missing = await agent.post('/logout').type('form').send({}).expect(403);
    expect(missing.text).toContain('Reload the page');
    await agent
      .post('/logout')
      .type('form')
      .send({ _csrf: 'f'.repeat(csrf.length) })
      .expect(403);
    await agent.post('/logout').type('form').send(`_csrf=${csrf}x`).expect(403);
    await agent.get('/dashboard').expect(200); // still logged in
    // A token from another session is no good either.
    const other = await loggedInAgent(t);
    await other.agent.post('/logout').type('form').send({ _csrf: csrf }).expect(403);
  });

  it('refuses a login POST without a CSRF token', async () => {
    await t.http().post('/login').type('form').send(ADMIN).expect(403);
    const before = (await auditActions('auth.login')).length;
    expect((await auditActions('auth.login')).length).toBe(before);
  });

  it('sends security headers with a CSP the pages satisfy', async () => {
    const res = await t.http().get('/login').expect(200);
    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['referrer-policy']).toBe('same-origin');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.text).not.toMatch(/<script>|<style>|style="| on[a-z]+="/i); // nothing inline that the CSP would block
    const api = await t.http().get('/api/v1/health');
    expect(api.headers['content-security-policy']).toBe(csp);
    expect(api.headers['set-cookie']).toBeUndefined(); // no sessions on the API
  });

  it('serves the stylesheet and script from /assets/', async () => {
    await t
      .http()
      .get('/assets/dashboard.css')
      .expect(200)
      .expect('Content-Type', /text\/css/);
    await t
      .http()
      .get('/assets/dashboard.js')
      .expect(200)
      .expect('Content-Type', /javascript/);
    await t.http().get('/assets/../package.json').expect(404);
  });
});
