import request from 'supertest';
import type { Server } from 'node:http';
import { createTestApp, TestApp } from './support/test-app';
import { startOpenIdProvider, TestOpenIdProvider, visitProvider } from './support/oidc-provider';
import type { Agent } from './dashboard-helpers';

const PUBLIC_URL = 'https://licences.example.test';
const CALLBACK = `${PUBLIC_URL}/login/sso/callback`;
const CLIENT = { clientId: 'licence-dashboard', clientSecret: 'test-client-secret-0123456789abcdef' };

/** Single sign-on end to end against a real OpenID provider (oidc-provider) on loopback, no mock of the client library. */
describe('single sign-on (OpenID Connect, authorization code + PKCE)', () => {
  let provider: TestOpenIdProvider;
  let t: TestApp;

  beforeAll(async () => {
    provider = await startOpenIdProvider({
      ...CLIENT,
      redirectUris: [CALLBACK],
      accounts: {
        'sub-alice': { preferred_username: 'alice', email: 'alice@example.test', roles: ['viewer', 'admin', 'rocket-scientist'] },
        'sub-mallory': { preferred_username: 'admin', email: 'mallory@example.test', roles: 'support' },
        'sub-nobody': { preferred_username: 'nobody', roles: ['superuser'] },
      },
    });
    t = await createTestApp({
      publicUrl: PUBLIC_URL,
      staff: {
        requireSecondFactor: true,
        signInLimit: 10,
        signInDelayMs: 1_000,
        oidc: { issuer: provider.issuer, ...CLIENT, roleClaim: 'roles' },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await provider?.stop();
  });

  const newAgent = () => request.agent(t.app.getHttpServer() as Server);

  /** The redirect to the provider: its authorization URL. */
  async function start(agent: Agent): Promise<URL> {
    const res = await agent.get('/login/sso').expect(303);
    return new URL(res.headers.location);
  }

  async function signIn(sub: string, agent = newAgent()) {
    await provider.signInAs(sub);
    const back = await visitProvider((await start(agent)).href, CALLBACK);
    const res = await agent.get(back.slice(PUBLIC_URL.length));
    return { agent, res };
  }

  it('offers single sign-on on the login page and asks the provider for a code with PKCE (S256), state and nonce', async () => {
    expect((await newAgent().get('/login').expect(200)).text).toContain('href="/login/sso"');
    const url = await start(newAgent());
    expect(url.origin).toBe(provider.issuer);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('redirect_uri')).toBe(CALLBACK);
  });

  it('creates the account at the first sign-in (matched by issuer and sub, no password, no second-factor enrolment) and reuses it after', async () => {
    const { agent, res } = await signIn('sub-alice');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/dashboard');
    expect((await agent.get('/dashboard').expect(200)).text).toContain('data-testid="current-user">alice<');
    const [user] = await t.sql(`SELECT id, password_hash, role FROM users WHERE username = 'alice'`);
    expect(user.password_hash).toBeNull();
    // roles: ['viewer', 'admin', 'rocket-scientist']: the highest known role wins, the unknown name is ignored.
    expect(user.role).toBe('admin');
    const identities = await t.sql(`SELECT user_id, issuer, subject FROM staff_sso_identities`);
    expect(identities).toEqual([{ user_id: user.id, issuer: provider.issuer, subject: 'sub-alice' }]);
    const again = await signIn('sub-alice');
    expect(again.res.headers.location).toBe('/dashboard');
    expect(await t.sql(`SELECT count(*)::int AS n FROM users WHERE username LIKE 'alice%'`)).toEqual([{ n: 1 }]);
    const events = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.signed_in' ORDER BY id LIMIT 2`);
    expect(events.map((e) => e.details)).toEqual([
      { username: 'alice', method: 'sso' },
      { username: 'alice', method: 'sso' },
    ]);
  });

  it('never hands an existing password account to an identity that uses its name: a new account is made instead', async () => {
    const { agent, res } = await signIn('sub-mallory');
    expect(res.headers.location).toBe('/dashboard');
    expect((await agent.get('/dashboard').expect(200)).text).toContain('data-testid="current-user">admin-2<');
    const [admin] = await t.sql(`SELECT password_hash, role FROM users WHERE username = 'admin'`);
    expect(admin.password_hash).toMatch(/^\$argon2id\$/);
    expect(admin.role).toBe('owner');
    expect(await t.sql(`SELECT role FROM users WHERE username = 'admin-2'`)).toEqual([{ role: 'support' }]);
  });

  it('applies the role the provider names at each sign-in, and refuses a disabled account', async () => {
    await t.sql(`UPDATE users SET role = 'viewer' WHERE username = 'alice'`);
    await signIn('sub-alice');
    expect(await t.sql(`SELECT role FROM users WHERE username = 'alice'`)).toEqual([{ role: 'admin' }]);
    await t.sql(`UPDATE users SET disabled = true WHERE username = 'alice'`);
    const { agent, res } = await signIn('sub-alice');
    expect(res.status).toBe(403);
    await agent.get('/dashboard').expect(302).expect('Location', '/login');
    await t.sql(`UPDATE users SET disabled = false WHERE username = 'alice'`);
  });

  it('refuses an identity whose role claim names no known role (and no OIDC_DEFAULT_ROLE): 403, no account', async () => {
    const { agent, res } = await signIn('sub-nobody');
    expect(res.status).toBe(403);
    expect(res.text).toContain('no role in this dashboard');
    await agent.get('/dashboard').expect(302).expect('Location', '/login');
    expect(await t.sql(`SELECT username FROM users WHERE username = 'nobody'`)).toEqual([]);
    const [failed] = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.sign_in_failed' ORDER BY id DESC LIMIT 1`);
    expect(failed.details).toEqual({ username: 'nobody', reason: 'sso_no_role' });
  });

  it('refuses a callback whose state is not the one this browser was given', async () => {
    await provider.signInAs('sub-alice');
    const victim = newAgent();
    await start(victim);
    // The attacker's own code and state, pushed into the victim's browser (login CSRF).
    const attackersBack = await visitProvider((await start(newAgent())).href, CALLBACK);
    const res = await victim.get(attackersBack.slice(PUBLIC_URL.length));
    expect(res.status).toBe(401);
    await victim.get('/dashboard').expect(302);
  });

  it('refuses an ID token whose nonce is not the one this browser was given', async () => {
    await provider.signInAs('sub-alice');
    const agent = newAgent();
    const url = await start(agent);
    url.searchParams.set('nonce', 'a-nonce-this-browser-never-had');
    const back = await visitProvider(url.href, CALLBACK);
    const res = await agent.get(back.slice(PUBLIC_URL.length));
    expect(res.status).toBe(401);
    await agent.get('/dashboard').expect(302);
  });

  it('refuses a code redeemed with another PKCE verifier (the state of this browser, the code of another)', async () => {
    await provider.signInAs('sub-alice');
    const agent = newAgent();
    const mine = await start(agent);
    const other = new URL(await visitProvider((await start(newAgent())).href, CALLBACK));
    other.searchParams.set('state', mine.searchParams.get('state')!);
    const res = await agent.get(`${other.pathname}${other.search}`);
    expect(res.status).toBe(401);
  });

  it('refuses a callback no sign-in started, and a second use of the same callback', async () => {
    const { agent, res } = await signIn('sub-alice');
    expect(res.status).toBe(303);
    await newAgent().get('/login/sso/callback?code=x&state=y').expect(401);
    // The checks were used up by the first callback.
    await agent.post('/logout');
    const replay = await newAgent().get(`/login/sso/callback?code=abc&state=def`);
    expect(replay.status).toBe(401);
  });
});

describe('single sign-on not configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);
  afterAll(() => t.close());

  it('shows no SSO button and answers 404 on its routes', async () => {
    expect((await t.http().get('/login').expect(200)).text).not.toContain('/login/sso');
    await t.http().get('/login/sso').expect(404);
    await t.http().get('/login/sso/callback?code=a&state=b').expect(404);
  });
});
