import request from 'supertest';
import { createTestApp, TestApp } from './support/test-app';
import { ADMIN, csrfFrom, loggedInAgent } from './dashboard-helpers';
import { requestAuditCount } from './support/factories';

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
/** Every Set-Cookie header of a response (supertest types headers as single strings). */
const setCookies = (res: { headers: Record<string, unknown> }): string[] => (res.headers['set-cookie'] as string[] | undefined) ?? [];

describe('dashboard: login, sessions, CSRF, headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);
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

  it('serves the login page to anyone, with a CSRF token bound to a short-lived login cookie and no-store caching', async () => {
    const res = await t
      .http()
      .get('/login')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(csrfFrom(res.text)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.text).toContain('name="username"');
    const cookies = setCookies(res);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatch(/^licence_login=[\w-]+\.\d+\.[\w-]+; Max-Age=600; Path=\/login; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
  });

  it('keeps no server state for anonymous visitors: 25 GET /login store no session and set no session cookie', async () => {
    const count = async () => (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM session'))[0].n;
    const before = await count();
    for (let i = 0; i < 25; i++) {
      const res = await t.http().get('/login').expect(200);
      expect(setCookies(res).join()).not.toMatch(/licence_session=/);
    }
    // Nor does a redirect to the login page, a failed login or a refused login form.
    await t.http().get('/dashboard').expect(302);
    const agent = request.agent(t.app.getHttpServer());
    const token = csrfFrom((await agent.get('/login')).text);
    await agent.post('/login').type('form').send({ username: 'admin', password: 'wrong-password', _csrf: token }).expect(401);
    await t.http().post('/login').type('form').send(ADMIN).expect(403);
    expect(await count()).toBe(before);
  });

  it('limits GET /login per IP (RATE_LIMIT_LOGIN_PAGE): 429 with the login form and Retry-After', async () => {
    const limited = await createTestApp({
      rateLimits: { activate: 10, deactivate: 10, validate: 60, heartbeat: 60, admin: 600, login: 5, loginPage: 3 },
    });
    try {
      for (let i = 0; i < 3; i++) await limited.http().get('/login').expect(200);
      const res = await limited.http().get('/login').expect(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toContain('name="_csrf"');
      // The POST has its own limit: a visitor who already has the form can still log in.
      const agent = request.agent(limited.app.getHttpServer());
      const loginCookie = setCookies(res)[0].split(';')[0];
      await agent
        .post('/login')
        .set('Cookie', loginCookie)
        .type('form')
        .send({ ...ADMIN, _csrf: csrfFrom(res.text) })
        .expect(303);
    } finally {
      await limited.close();
    }
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
    const failures = await auditActions('staff.sign_in_failed');
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

  it('logs in: a new session, cookie flags, a user in the nav bar and an audit entry', async () => {
    const agent = request.agent(t.app.getHttpServer());
    const page = await agent.get('/login');
    expect(setCookies(page).join()).not.toMatch(/licence_session=/); // the session starts at login
    const res = await agent
      .post('/login')
      .type('form')
      .send({ ...ADMIN, _csrf: csrfFrom(page.text) })
      .expect(303)
      .expect('Location', '/dashboard');
    const cookie: string = res.headers['set-cookie'][0];
    expect(cookie).toMatch(/^licence_session=s%3A/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i); // plain HTTP here
    const lifetime = Date.parse(/Expires=([^;]+)/i.exec(cookie)?.[1] ?? '') - Date.now();
    expect(lifetime).toBeGreaterThan(8 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(8 * 3600_000);
    const dashboard = await agent.get('/dashboard').expect(200);
    expect(dashboard.text).toContain('data-testid="current-user">admin<');
    const logins = await auditActions('staff.signed_in');
    expect(logins.at(-1)).toMatchObject({ actor: 'staff:admin', actor_type: 'dashboard' });
    expect((await t.sql('SELECT last_sign_in_at FROM users'))[0].last_sign_in_at).not.toBeNull();
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

  it('marks the cookies Secure when the request came over HTTPS through a trusted proxy', async () => {
    const proxied = await createTestApp({ trustProxy: '1' });
    try {
      const page = await proxied.http().get('/login').set('X-Forwarded-Proto', 'https').expect(200);
      const loginCookie: string = page.headers['set-cookie'][0];
      expect(loginCookie).toMatch(/; Secure/i);
      const res = await proxied
        .http()
        .post('/login')
        .set('X-Forwarded-Proto', 'https')
        .set('Cookie', loginCookie.split(';')[0])
        .type('form')
        .send({ ...ADMIN, _csrf: csrfFrom(page.text) })
        .expect(303);
      expect(res.headers['set-cookie'][0]).toMatch(/^licence_session=.*; Secure/i);
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
    expect((await auditActions('auth.logout')).at(-1)).toMatchObject({ actor: 'staff:admin', actor_type: 'dashboard' });
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

  it("checks the token on every dashboard POST: missing, or the session's own token sent twice, is 403 and changes nothing", async () => {
    const { agent, token } = await loggedInAgent(t);
    const csrf = await token('/dashboard');
    const { id } = (
      await t.admin
        .post('/api/v1/admin/licenses')
        .send({ product_code: 'ERP_SUITE', license_type: 'YEARLY', customer_name: 'CSRF target' })
        .expect(201)
    ).body as { id: number };
    const snapshot = async () => ({
      licence: await t.sql('SELECT active, revoked_at, customer_name FROM licenses WHERE id = $1', [id]),
      licences: await t.sql('SELECT count(*)::int AS n FROM licenses'),
      audit: await requestAuditCount(t),
    });
    const before = await snapshot();
    const routes = [
      '/licenses',
      `/licenses/${id}/suspend`,
      `/licenses/${id}/reinstate`,
      `/licenses/${id}/revoke`,
      `/licenses/${id}/release`,
      '/logout',
    ];
    for (const route of routes) {
      const fields = 'product_code=ERP_SUITE&license_type=YEARLY&customer_name=x&reason=csrf';
      await agent.post(route).type('form').send(fields).expect(403);
      await agent.post(route).type('form').send(`${fields}&_csrf=${csrf}&_csrf=${csrf}`).expect(403);
    }
    expect(await snapshot()).toEqual(before);
    await agent.get('/dashboard').expect(200);
    // By design the session's own token is also taken from the X-CSRF-Token header: another site cannot set that header
    // without a CORS preflight, which the server never grants.
    await agent.post(`/licenses/${id}/suspend`).set('X-CSRF-Token', csrf).type('form').send({}).expect(303);
    expect((await t.sql('SELECT active FROM licenses WHERE id = $1', [id]))[0].active).toBe(false);
  });

  describe("the login form's CSRF token (signed double-submit: form token + login cookie)", () => {
    const loginAudit = async () => (await auditActions('staff.signed_in')).length + (await auditActions('staff.sign_in_failed')).length;
    const formAndCookie = async () => {
      const page = await t.http().get('/login').expect(200);
      return { token: csrfFrom(page.text), cookie: setCookies(page)[0].split(';')[0] };
    };
    const post = (cookie: string | undefined, fields: Record<string, string | undefined>) => {
      const req = t.http().post('/login').type('form');
      if (cookie) req.set('Cookie', cookie);
      return req.send(fields);
    };

    it('refuses, with 403, the login form again and nothing logged in or audited: no token, no cookie, a mismatched pair, a forged one', async () => {
      const mine = await formAndCookie();
      const other = await formAndCookie();
      const before = await loginAudit();
      const refusals = [
        ['no token, no cookie', post(undefined, { ...ADMIN })],
        ['no token', post(mine.cookie, { ...ADMIN })],
        ['no cookie', post(undefined, { ...ADMIN, _csrf: mine.token })],
        ["another visitor's token", post(mine.cookie, { ...ADMIN, _csrf: other.token })],
        ['a forged token', post(mine.cookie, { ...ADMIN, _csrf: 'A'.repeat(mine.token.length) })],
        [
          'a tampered cookie',
          post(
            mine.cookie.replace(/\.(\d+)\./, (_m, n: string) => `.${Number(n) + 3_600_000}.`),
            { ...ADMIN, _csrf: mine.token },
          ),
        ],
        ['the token in a header', post(mine.cookie, { ...ADMIN }).set('X-CSRF-Token', mine.token)],
      ] as const;
      for (const [label, pending] of refusals) {
        const res = await pending;
        expect([label, res.status]).toEqual([label, 403]);
        expect(res.text).toContain('The login form has expired or did not come from this site');
        expect(res.text).toContain('name="_csrf"'); // a fresh form to try again
        expect(setCookies(res).join()).not.toMatch(/licence_session=/);
      }
      expect(await loginAudit()).toBe(before);
      // The matching pair logs in, so the refusals were for the token and nothing else.
      await post(mine.cookie, { ...ADMIN, _csrf: mine.token })
        .expect(303)
        .expect('Location', '/dashboard');
    });

    it('the form sent back after a refusal works', async () => {
      const agent = request.agent(t.app.getHttpServer());
      const refused = await agent.post('/login').type('form').send(ADMIN).expect(403);
      await agent
        .post('/login')
        .type('form')
        .send({ ...ADMIN, _csrf: csrfFrom(refused.text) })
        .expect(303);
    });
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
