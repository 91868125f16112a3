import request from 'supertest';
import type { Server } from 'node:http';
import { csrfFrom, postForm, type Agent } from './dashboard-helpers';
import { startOpenIdProvider, type TestOpenIdProvider, visitProvider } from './support/oidc-provider';
import { SoftAuthenticator } from './support/soft-authenticator';
import { createTestApp, type TestApp } from './support/test-app';

jest.setTimeout(60_000);

const PUBLIC_URL = 'https://licences.example.test';
const CALLBACK = `${PUBLIC_URL}/login/sso/callback`;
const CLIENT = { clientId: 'licence-dashboard', clientSecret: 'test-client-secret-0123456789abcdef' };
const HANNA = { preferred_username: 'hanna', email: 'hanna@example.test', roles: ['admin'] };

/**
 * The provider decides for single sign-on accounts (docs/security.md, Single sign-on accounts), against a real OpenID
 * provider on loopback: a passkey is never a way around it, and the SSO start stores nothing for an anonymous visitor.
 */
describe('single sign-on accounts: the provider decides', () => {
  let provider: TestOpenIdProvider;
  let t: TestApp;

  beforeAll(async () => {
    provider = await startOpenIdProvider({ ...CLIENT, redirectUris: [CALLBACK], accounts: { 'sub-hanna': HANNA } });
    t = await createTestApp({
      publicUrl: PUBLIC_URL,
      staff: {
        requireSecondFactor: false,
        signInLimit: 10,
        signInDelayMs: 1_000,
        oidc: { issuer: provider.issuer, ...CLIENT, roleClaim: 'roles' },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await provider?.stop();
  }, 60_000);

  const newAgent = () => request.agent(t.app.getHttpServer() as Server);
  const sessions = async () => Number((await t.sql(`SELECT count(*)::int AS n FROM session`))[0].n);

  async function viaProvider(agent: Agent, start: () => Promise<request.Response>) {
    await provider.signInAs('sub-hanna');
    const redirect = await start();
    expect(redirect.status).toBe(303);
    const back = await visitProvider(redirect.headers.location, CALLBACK);
    return agent.get(back.slice(PUBLIC_URL.length));
  }

  async function passkeySignIn(authenticator: SoftAuthenticator) {
    const agent = newAgent();
    const csrf = csrfFrom((await agent.get('/login').expect(200)).text);
    const options = await agent.post('/login/passkey/options').type('form').send({ _csrf: csrf }).expect(200);
    const res = await agent
      .post('/login/passkey')
      .type('form')
      .send({ response: JSON.stringify(authenticator.authenticate(options.body)), _csrf: csrf });
    return { agent, res };
  }

  it('an anonymous GET /login/sso stores no session row (the checks travel in a sealed cookie)', async () => {
    const before = await sessions();
    const res = await newAgent().get('/login/sso').expect(303);
    expect(await sessions()).toBe(before);
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    expect(cookies.some((c) => c.startsWith('licence_sso='))).toBe(true);
    expect(cookies.some((c) => c.startsWith('licence_session='))).toBe(false);
  });

  it('an SSO admin registers a passkey; the passkey never signs her in, and once the provider drops her role she has no way in', async () => {
    const hanna = newAgent();
    const signedIn = await viaProvider(hanna, () => hanna.get('/login/sso'));
    expect(signedIn.headers.location).toBe('/dashboard');
    const csrf = csrfFrom((await hanna.get('/account/security').expect(200)).text);
    const authenticator = new SoftAuthenticator(PUBLIC_URL);
    const options = await postForm(hanna, csrf, '/account/security/passkeys/options').expect(200);
    await postForm(hanna, csrf, '/account/security/passkeys', { response: JSON.stringify(authenticator.register(options.body)) })
      .expect(303)
      .expect('Location', '/account/security');
    expect(await t.sql(`SELECT count(*)::int AS n FROM staff_passkeys`)).toEqual([{ n: 1 }]);

    // The passkey alone is refused, with a message that says how this account signs in; no session is made.
    const refused = await passkeySignIn(authenticator);
    expect(refused.res.status).toBe(401);
    expect(refused.res.text).toContain('signs in with single sign-on');
    expect(([] as string[]).concat(refused.res.headers['set-cookie'] ?? []).some((c) => c.startsWith('licence_session='))).toBe(false);
    await refused.agent.get('/tokens').expect(302).expect('Location', '/login');

    // The provider removes her role: the next sign-in attempt, by any way, fails.
    await provider.setClaims('sub-hanna', { ...HANNA, roles: [] });
    const late = newAgent();
    const viaSso = await viaProvider(late, () => late.get('/login/sso'));
    expect(viaSso.status).toBe(403);
    await late.get('/dashboard').expect(302).expect('Location', '/login');
    const again = await passkeySignIn(authenticator);
    expect(again.res.status).toBe(401);
    await again.agent.get('/webhooks').expect(302).expect('Location', '/login');
    const failed = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.sign_in_failed' ORDER BY id DESC LIMIT 1`);
    expect(failed[0].details).toEqual({ username: 'hanna', reason: 'sso_account' });
    await provider.setClaims('sub-hanna', HANNA);
  });

  it('an SSO account confirms access at its provider (not with a password or a passkey), and returns to the form', async () => {
    const hanna = newAgent();
    await viaProvider(hanna, () => hanna.get('/login/sso'));
    await t.sql(`UPDATE session SET sess = (sess::jsonb || '{"sudoAt": 0}'::jsonb)::json`);
    const page = await hanna.get('/account/sudo?return_to=/tokens').expect(200);
    expect(page.text).toContain('data-testid="sudo-sso"');
    expect(page.text).not.toContain('name="password"');
    const csrf = csrfFrom(page.text);
    await postForm(hanna, csrf, '/tokens', { name: 'ci', scopes: 'licenses:read' })
      .expect(303)
      .expect('Location', /^\/account\/sudo/);
    await postForm(hanna, csrf, '/account/sudo', { password: 'anything-at-all', return_to: '/tokens' }).expect(401);
    const back = await viaProvider(hanna, () => postForm(hanna, csrf, '/account/sudo/sso', { return_to: '/tokens' }));
    expect([back.status, back.headers.location]).toEqual([303, '/tokens']);
    await hanna.get('/tokens').expect(200);
  });
});
