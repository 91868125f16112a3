import { startServer, ServerProcess } from '../support/server-process';
import { startOpenIdProvider, TestOpenIdProvider, visitProvider } from '../support/oidc-provider';
import { ClusterEnv, createClusterEnv } from './cluster-env';

const PUBLIC_URL = 'https://licences.example.test';
const CALLBACK = `${PUBLIC_URL}/login/sso/callback`;

/**
 * Single sign-on configured from environment variables only (OIDC_*; docs/dashboard.md, Single sign-on), on two real
 * server processes behind one PUBLIC_URL, against a real OpenID provider on loopback: a sign-in started on one instance
 * completes on the other (its checks travel in a sealed cookie any instance with the same SESSION_SECRET opens).
 */
describe('single sign-on on server processes configured from the environment', () => {
  let provider: TestOpenIdProvider;
  let cluster: ClusterEnv;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    provider = await startOpenIdProvider({
      clientId: 'licence-dashboard',
      clientSecret: 'cluster-client-secret-0123456789',
      redirectUris: [CALLBACK],
      accounts: { 'sub-carol': { preferred_username: 'carol', groups: ['licence-support', 'support'] } },
    });
    cluster = await createClusterEnv({
      PUBLIC_URL,
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: 'licence-dashboard',
      OIDC_CLIENT_SECRET: 'cluster-client-secret-0123456789',
      OIDC_ROLE_CLAIM: 'groups',
    });
    a = await startServer(cluster.env);
    b = await startServer(cluster.env);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.cleanup();
    await provider?.stop();
  });

  const cookieNamed = (res: Response, name: string) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .find((c) => c.startsWith(`${name}=`)) ?? '';
  const sessionCookie = (res: Response) => cookieNamed(res, 'licence_session');

  it('signs in through the provider: started on one instance, finished on the other, and the account stays', async () => {
    const started = await fetch(`${a.url}/login/sso`, { redirect: 'manual' });
    expect(started.status).toBe(303);
    // Nothing is stored for the anonymous visitor: no session, only the sealed ceremony cookie.
    expect(sessionCookie(started)).toBe('');
    const cookie = cookieNamed(started, 'licence_sso');
    expect(cookie).not.toBe('');
    const back = await visitProvider(started.headers.get('location')!, CALLBACK);
    const finished = await fetch(`${b.url}${back.slice(PUBLIC_URL.length)}`, { redirect: 'manual', headers: { cookie } });
    expect(finished.status).toBe(303);
    expect(finished.headers.get('location')).toBe('/dashboard');
    const signedIn = sessionCookie(finished);
    const page = await fetch(`${a.url}/dashboard`, { redirect: 'manual', headers: { cookie: signedIn } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-testid="current-user">carol<');
  });

  it('refuses the callback on the other instance when the browser brings no cookie of the started sign-in', async () => {
    const started = await fetch(`${a.url}/login/sso`, { redirect: 'manual' });
    const back = await visitProvider(started.headers.get('location')!, CALLBACK);
    const finished = await fetch(`${b.url}${back.slice(PUBLIC_URL.length)}`, { redirect: 'manual' });
    expect(finished.status).toBe(401);
  });
});
