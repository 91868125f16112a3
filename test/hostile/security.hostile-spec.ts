import { ExecutionContext } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import nodeCrypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { ApiKeyGuard } from '../../src/auth/api-keys';
import { ADMIN, csrfFrom, loggedInAgent } from '../dashboard-helpers';
import { createLicense } from '../support/factories';
import { createTestApp, TEST_API_KEY, TestApp } from '../support/test-app';
import { testConfigFor } from '../support/unit-config';
import { leaks } from './support/contract';
import { jsonRequest, RawResponse, send } from './support/raw-http';
import { report } from './support/report';

// The default import is the module object itself (a namespace import would be a copy): the guard calls
// timingSafeEqual through it, so spying on it sees every call.

const results: Record<string, unknown> = {};
afterAll(() => report('security', results));

describe('API key comparison: constant time, every configured key checked', () => {
  const keys = ['first-key-0123456789abcdef', 'second-key-0123456789abcdef', 'third-key-0123456789abcdef'];
  const guard = new ApiKeyGuard(testConfigFor({ apiKeys: keys }));
  const attempt = (header: string | undefined) => {
    const req = { headers: header === undefined ? {} : { 'x-api-key': header }, ip: '203.0.113.9' };
    const ctx = { switchToHttp: () => ({ getRequest: () => req }) } as unknown as ExecutionContext;
    try {
      return guard.canActivate(ctx);
    } catch {
      return false;
    }
  };

  it.each([
    ['missing', undefined, false],
    ['empty', '', false],
    ['one character', 'x', false],
    ['the first key but its last character', keys[0].slice(0, -1), false],
    ['the first key plus one character', `${keys[0]}x`, false],
    ['1 MB', 'k'.repeat(1024 * 1024), false],
    ['the first key', keys[0], true],
    ['the last key', keys[2], true],
  ])('%s: hashes the header and compares equal-length digests with every key, whatever matches', (_label, header, accepted) => {
    const compare = jest.spyOn(nodeCrypto, 'timingSafeEqual');
    try {
      expect(attempt(header)).toBe(accepted);
      // No early exit on a match or a mismatch, and never a comparison of the raw (variable-length) header.
      expect(compare).toHaveBeenCalledTimes(keys.length);
      for (const [a, b] of compare.mock.calls as [Buffer, Buffer][]) expect([a.length, b.length]).toEqual([32, 32]);
    } finally {
      compare.mockRestore();
    }
  });
});

describe('security of the running app', () => {
  let t: TestApp;
  let port: number;
  const get = (path: string, headers: [string, string][] = []) => send(port, { method: 'GET', path, headers });

  beforeAll(async () => {
    // A small validate limit to see a 429; TRUST_PROXY for the HTTPS cookie check.
    t = await createTestApp({
      trustProxy: 'loopback',
      rateLimits: { activate: 10_000, deactivate: 10_000, validate: 3, heartbeat: 10_000, admin: 10_000, login: 10_000 },
    });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });

  afterAll(() => t?.close());

  /** Logs in through the form over raw HTTP, with a session cookie planted in the browser if given; returns the session cookie issued. */
  async function logIn(planted?: string): Promise<string> {
    const loginPage = await get('/login', planted ? [['Cookie', planted]] : []);
    expect(loginPage.status).toBe(200);
    const loginCookie = (loginPage.headers['set-cookie']?.[0] ?? '').split(';')[0];
    const login = await send(port, {
      method: 'POST',
      path: '/login',
      headers: [
        ['Content-Type', 'application/x-www-form-urlencoded'],
        ['Cookie', [planted, loginCookie].filter(Boolean).join('; ')],
      ],
      body: new URLSearchParams({ ...ADMIN, _csrf: csrfFrom(loginPage.body) }).toString(),
    });
    expect(login.status).toBe(303);
    return (login.headers['set-cookie']?.[0] ?? '').split(';')[0];
  }

  /** A session cookie for `sid` signed with the app's secret, as express-session (cookie-signature) signs it. */
  const signedSessionCookie = (sid: string) =>
    `licence_session=${encodeURIComponent(`s:${sid}.${nodeCrypto.createHmac('sha256', t.config.sessionSecret).update(sid).digest('base64').replace(/=+$/, '')}`)}`;

  it('wrong API keys all get the same answer: no oracle for how close a guess was', async () => {
    const bodies = new Set<string>();
    for (const key of ['x', TEST_API_KEY.slice(0, -1), `${TEST_API_KEY}x`, TEST_API_KEY.toUpperCase(), 'a'.repeat(TEST_API_KEY.length)]) {
      const res = await get('/api/v1/admin/stats', [['X-API-Key', key]]);
      expect(res.status).toBe(401);
      bodies.add(res.body);
    }
    expect([...bodies]).toEqual(['{"error":{"code":"UNAUTHORIZED","message":"Invalid API key"}}']);
  });

  it('an unexpected database error is a bare 500: no SQL, no stack, no driver message', async () => {
    await t.sql('ALTER TABLE products RENAME COLUMN name TO name_renamed_by_test');
    try {
      const api = await get('/api/v1/admin/products', [['X-API-Key', TEST_API_KEY]]);
      expect(api.status).toBe(500);
      expect(api.body).toBe('{"error":{"code":"INTERNAL_ERROR","message":"Internal server error"}}');
      expect(leaks(api)).toEqual([]);
      const { agent } = await loggedInAgent(t);
      // The new-licence form lists the products (statistics read the product_catalog view, which a rename does not break).
      const page = await agent.get('/licenses/new');
      expect(page.status).toBeGreaterThanOrEqual(500);
      expect(page.text).not.toMatch(/name_renamed_by_test|column|SELECT|QueryFailedError|at [\w.]+ \(/);
    } finally {
      await t.sql('ALTER TABLE products RENAME COLUMN name_renamed_by_test TO name');
    }
  });

  it('security headers on every kind of response: API, errors, dashboard pages, redirects, assets, Swagger UI', async () => {
    const cookie = await logIn();
    const licence = await createLicense(t);
    const plain: Record<string, RawResponse> = {
      'API 200': await get('/api/v1/health'),
      'admin API 200': await get('/api/v1/admin/licenses', [['X-API-Key', TEST_API_KEY]]),
      'signed licence 200': await send(
        port,
        jsonRequest('POST', '/api/v1/activate', {
          license_key: licence.license_key,
          machine_fingerprint: `sha256:${'c'.repeat(64)}`,
          hostname: 'h',
        }),
      ),
      'API 400': await send(port, jsonRequest('POST', '/api/v1/activate', { license_key: 1 })),
      'API 401': await get('/api/v1/admin/stats'),
      'API 404': await get('/api/v1/nothing-here'),
      'API 413': await send(port, jsonRequest('POST', '/api/v1/activate', { x: 'a'.repeat(70_000) })),
      'login page': await get('/login'),
      'redirect to login': await get('/dashboard'),
      'dashboard page (logged in)': await get('/dashboard', [['Cookie', cookie]]),
      'licence page (logged in)': await get(`/licenses/${licence.id}`, [['Cookie', cookie]]),
      stylesheet: await get('/assets/app.css'),
      'Swagger UI': await get('/api/docs'),
    };
    for (let i = 0; i < 4; i++)
      plain['API 429'] = await send(
        port,
        jsonRequest('POST', '/api/v1/validate', { license_key: 'x', machine_fingerprint: `sha256:${'a'.repeat(64)}` }),
      );
    expect(plain['API 429'].status).toBe(429);
    const missing: string[] = [];
    for (const [name, res] of Object.entries(plain)) {
      const h = (n: string) => res.headers[n]?.join(', ') ?? '';
      const expectations: [string, boolean][] = [
        [
          'Content-Security-Policy with default-src and frame-ancestors',
          /default-src 'self'/.test(h('content-security-policy')) && /frame-ancestors 'none'/.test(h('content-security-policy')),
        ],
        ['X-Content-Type-Options: nosniff', h('x-content-type-options') === 'nosniff'],
        ['X-Frame-Options', /^(DENY|SAMEORIGIN)$/.test(h('x-frame-options'))],
        ['Strict-Transport-Security', /max-age=\d{7,}/.test(h('strict-transport-security'))],
        ['Referrer-Policy', h('referrer-policy') !== ''],
        ['Cross-Origin-Opener-Policy', h('cross-origin-opener-policy') === 'same-origin'],
        ['no X-Powered-By', h('x-powered-by') === ''],
        ['no Server version', !/\d/.test(h('server'))],
      ];
      // Customer data, keys and signed licences are never cached; nor are logged-in pages.
      if (
        name.startsWith('API') ||
        name.startsWith('admin') ||
        name.startsWith('signed') ||
        name.includes('logged in') ||
        name === 'login page'
      ) {
        expectations.push(['Cache-Control: no-store', /no-store/.test(h('cache-control'))]);
      }
      for (const [what, ok] of expectations) if (!ok) missing.push(`${name} (${res.status}): ${what}`);
    }
    // Answers written below Express (the HTTP parser refused the request) still carry the basics.
    const parser = await get('/api/v1/health', [['X-Pad', 'a'.repeat(20_000)]]);
    expect(parser.status).toBe(431);
    expect([parser.headers['x-content-type-options']?.[0], parser.headers['cache-control']?.[0]]).toEqual(['nosniff', 'no-store']);
    results.responses_checked_for_headers = Object.keys(plain).length + 1;
    expect(missing).toEqual([]);
  });

  it('cookies: the session cookie is HttpOnly, SameSite=Lax, host-only, Secure over HTTPS; the JSON API never sets one', async () => {
    // Before login only the login form's cookie: SameSite=Strict, limited to /login, minutes long.
    const page = await get('/login');
    expect(page.headers['set-cookie']).toHaveLength(1);
    const loginCookie = page.headers['set-cookie']?.[0] ?? '';
    expect(loginCookie).toMatch(/^licence_login=[^;]+; Max-Age=600; Path=\/login; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
    const postLogin = (https: boolean, pageRes: RawResponse) =>
      send(port, {
        method: 'POST',
        path: '/login',
        headers: [
          ['Content-Type', 'application/x-www-form-urlencoded'],
          ['Cookie', (pageRes.headers['set-cookie']?.[0] ?? '').split(';')[0]],
          ...(https ? ([['X-Forwarded-Proto', 'https']] as [string, string][]) : []),
        ],
        body: new URLSearchParams({ ...ADMIN, _csrf: csrfFrom(pageRes.body) }).toString(),
      });
    const login = await postLogin(false, page);
    expect(login.status).toBe(303);
    const cookie = login.headers['set-cookie']?.[0] ?? '';
    expect(cookie).toMatch(/^licence_session=s%3A/);
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/; Domain=/i);
    expect(cookie).not.toMatch(/; Secure/i);
    const httpsPage = await get('/login', [['X-Forwarded-Proto', 'https']]);
    expect(httpsPage.headers['set-cookie']?.[0]).toMatch(/; Secure/i);
    expect((await postLogin(true, httpsPage)).headers['set-cookie']?.[0]).toMatch(/^licence_session=.*; Secure/i);
    const licence = await createLicense(t);
    const api = [
      await get('/api/v1/health'),
      await get('/api/v1/public-key'),
      await get('/api/v1/admin/licenses', [['X-API-Key', TEST_API_KEY]]),
      await send(
        port,
        jsonRequest('POST', '/api/v1/activate', {
          license_key: licence.license_key,
          machine_fingerprint: `sha256:${'d'.repeat(64)}`,
          hostname: 'h',
        }),
      ),
      await send(port, jsonRequest('POST', '/api/v1/activate', { nonsense: true })),
    ];
    expect(api.map((r) => r.headers['set-cookie'] ?? [])).toEqual(api.map(() => []));
  });

  it('CSRF: a logged-in user cannot be made to create a licence or log out from another site', async () => {
    const victim = await loggedInAgent(t);
    const attacker = await loggedInAgent(t);
    const attackerToken = await attacker.token();
    const count = async () => (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM licenses'))[0].n;
    const before = await count();
    const form = { product_code: 'ERP_SUITE', license_type: 'QUARTERLY', customer_name: 'Forged by CSRF' };
    // No token, the attacker's own (valid) token, a token in a header, a token sent twice, a forged token.
    await victim.agent.post('/licenses').type('form').send(form).expect(403);
    await victim.agent
      .post('/licenses')
      .type('form')
      .send({ ...form, _csrf: attackerToken })
      .expect(403);
    await victim.agent.post('/licenses').set('X-CSRF-Token', attackerToken).type('form').send(form).expect(403);
    await victim.agent
      .post('/licenses')
      .type('form')
      .send(`product_code=ERP_SUITE&license_type=QUARTERLY&customer_name=x&_csrf=${attackerToken}&_csrf=${attackerToken}`)
      .expect(403);
    await victim.agent
      .post('/licenses')
      .type('form')
      .send({ ...form, _csrf: 'A'.repeat(attackerToken.length) })
      .expect(403);
    await victim.agent.post('/logout').type('form').send({ _csrf: attackerToken }).expect(403);
    await victim.agent.get('/dashboard').expect(200); // still logged in
    expect(await count()).toBe(before);
    // Login CSRF: logging the victim into the attacker's account needs a token of the victim's own session.
    const fresh = request.agent(t.app.getHttpServer());
    await fresh.get('/login').expect(200);
    await fresh
      .post('/login')
      .type('form')
      .send({ ...ADMIN, _csrf: attackerToken })
      .expect(403);
    // And the right token works, so the refusals above were for the token and nothing else.
    await victim.agent
      .post('/licenses')
      .type('form')
      .send({ ...form, _csrf: await victim.token() })
      .expect(303);
    expect(await count()).toBe(before + 1);
  });

  it('session fixation: a session id planted before login is not the one that gets logged in', async () => {
    // No anonymous session is ever stored, so there is none to fetch and plant. An attacker who could still plant an id
    // (an id of their choosing signed with a leaked secret, or a stored anonymous session from an older version) gains nothing:
    const chosen = signedSessionCookie('attacker-chosen-id');
    const fromChosen = await logIn(chosen);
    expect(fromChosen).toMatch(/^licence_session=/);
    expect(fromChosen).not.toContain('attacker-chosen-id');
    expect(await t.sql("SELECT sid FROM session WHERE sid = 'attacker-chosen-id'")).toEqual([]);
    expect((await get('/dashboard', [['Cookie', chosen]])).headers.location?.[0]).toBe('/login');

    const stored = await logIn();
    const storedSid = decodeURIComponent(stored.slice('licence_session='.length)).slice(2).split('.')[0];
    await t.sql(`UPDATE session SET sess = (sess::jsonb - 'passport')::json WHERE sid = $1`, [storedSid]);
    const planted = signedSessionCookie(storedSid);
    expect((await get('/dashboard', [['Cookie', planted]])).headers.location?.[0]).toBe('/login'); // anonymous now
    const issued = await logIn(planted);
    expect(issued).toMatch(/^licence_session=/);
    expect(issued).not.toBe(planted);
    // The planted id stays anonymous (its row is gone: login regenerated the session); only the issued one is logged in.
    expect(await t.sql('SELECT sid FROM session WHERE sid = $1', [storedSid])).toEqual([]);
    expect((await get('/dashboard', [['Cookie', planted]])).headers.location?.[0]).toBe('/login');
    expect((await get('/dashboard', [['Cookie', issued]])).status).toBe(200);
    // A made-up or re-signed cookie is ignored.
    const forged = issued.replace(/\.[^.]+$/, '.forgedsignature');
    expect((await get('/dashboard', [['Cookie', forged]])).status).toBe(302);
    expect((await get('/dashboard', [['Cookie', 'licence_session=s%3Aattacker-chosen-id.bad']])).status).toBe(302);
    // After logout a copied cookie is worthless: the session is gone from the store.
    const dashboard = await get('/dashboard', [['Cookie', issued]]);
    await send(port, {
      method: 'POST',
      path: '/logout',
      headers: [
        ['Content-Type', 'application/x-www-form-urlencoded'],
        ['Cookie', issued],
      ],
      body: `_csrf=${encodeURIComponent(csrfFrom(dashboard.body))}`,
    });
    expect((await get('/dashboard', [['Cookie', issued]])).status).toBe(302);
  });
});

/**
 * `npm audit` needs the registry's advisory endpoint, which is not reachable everywhere (docs/security.md).
 * This offline check pins what is known: no production dependency below the version that fixed an advisory.
 */
describe('dependencies: no production package below the fix of a known advisory', () => {
  const FIXED_IN: [string, string[], string][] = [
    ['on-headers', ['1.1.0'], 'CVE-2025-7339'],
    ['cookie', ['0.7.0'], 'CVE-2024-47764'],
    ['body-parser', ['1.20.3'], 'CVE-2024-45590'],
    ['send', ['0.19.0'], 'CVE-2024-43799'],
    ['serve-static', ['1.16.0'], 'CVE-2024-43800'],
    ['express', ['4.20.0'], 'CVE-2024-43796'],
    ['path-to-regexp', ['0.1.12', '1.9.0', '3.3.0', '6.3.0', '8.0.0'], 'CVE-2024-45296, CVE-2024-52798'],
    ['handlebars', ['4.7.7'], 'CVE-2021-23383'],
    ['form-data', ['2.5.4', '3.0.4', '4.0.4'], 'CVE-2025-7783'],
    ['multer', ['2.0.2'], 'CVE-2025-47935, CVE-2025-47944, CVE-2025-48997, CVE-2025-7338'],
    ['cross-spawn', ['6.0.6', '7.0.5'], 'CVE-2024-21538'],
    ['braces', ['3.0.3'], 'CVE-2024-4068'],
    ['micromatch', ['4.0.8'], 'CVE-2024-4067'],
    ['semver', ['5.7.2', '6.3.1', '7.5.2'], 'CVE-2022-25883'],
    ['ws', ['5.2.4', '6.2.3', '7.5.10', '8.17.1'], 'CVE-2024-37890'],
    ['qs', ['6.10.3'], 'CVE-2022-24999'],
    ['validator', ['13.15.20'], 'CVE-2025-56200'],
  ];

  const parse = (v: string) => v.split(/[.+-]/).slice(0, 3).map(Number);
  const below = (v: string, w: string) => {
    const [a, b] = [parse(v), parse(w)];
    for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i];
    return false;
  };
  /** Vulnerable when below the fix of its own major line, or older than every fixed line. */
  const vulnerable = (version: string, fixes: string[]) => {
    const major = parse(version)[0];
    const sameLine = fixes.find((f) => parse(f)[0] === major);
    if (sameLine) return below(version, sameLine);
    return fixes.every((f) => parse(f)[0] > major);
  };

  it('every installed copy in the production tree is at or past the fixed version', () => {
    const tree = JSON.parse(
      execFileSync('npm', ['ls', '--omit=dev', '--all', '--json'], {
        cwd: join(__dirname, '..', '..'),
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    );
    const installed = new Map<string, Set<string>>();
    const walk = (deps: Record<string, { version?: string; dependencies?: Record<string, unknown> }> | undefined) => {
      for (const [name, dep] of Object.entries(deps ?? {})) {
        if (dep.version) (installed.get(name) ?? installed.set(name, new Set()).get(name))?.add(dep.version);
        walk(dep.dependencies as never);
      }
    };
    walk(tree.dependencies);
    expect(installed.size).toBeGreaterThan(100);
    const found: string[] = [];
    const checked: string[] = [];
    for (const [name, fixes, advisory] of FIXED_IN) {
      for (const version of installed.get(name) ?? []) {
        checked.push(`${name}@${version}`);
        if (vulnerable(version, fixes)) found.push(`${name}@${version} (${advisory})`);
      }
    }
    results.production_packages = installed.size;
    results.advisory_pins_checked = checked;
    expect(found).toEqual([]);
  });
});
