import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { Client } from 'pg';
import { startServer, ServerProcess } from '../support/server-process';
import { ClusterEnv, createClusterEnv } from './cluster-env';

/**
 * The customer portal on two real server processes, one PostgreSQL, one Redis (docs/portal.md, Sessions; Signing in):
 * a portal session made on one instance works on the other, and the per-address limit counts across both.
 */
describe('customer portal behind a load balancer', () => {
  let cluster: ClusterEnv;
  let a: ServerProcess;
  let b: ServerProcess;
  let ipCounter = 0;
  const clientIp = () => `203.0.113.${++ipCounter}`;

  beforeAll(async () => {
    cluster = await createClusterEnv({ PUBLIC_URL: 'https://licences.example.test' });
    a = await startServer(cluster.env);
    b = await startServer(cluster.env);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.cleanup();
  });

  const cookieOf = (res: Response, name: string) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .find((c) => c.startsWith(`${name}=`)) ?? '';

  /** The sign-in form posted as a browser would: its page first (form cookie and token), from one client IP. */
  async function askForLink(server: ServerProcess, email: string): Promise<number> {
    const ip = clientIp();
    const page = await fetch(`${server.url}/portal/login`, { headers: { 'x-forwarded-for': ip } });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const res = await fetch(`${server.url}/portal/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieOf(page, 'portal_form'), 'x-forwarded-for': ip },
      body: new URLSearchParams({ email, _csrf: csrf }).toString(),
    });
    return res.status;
  }

  /** Sign-in links written as .eml files (no SMTP_URL: docs/mail.md, The `.eml` fallback), once `count` are there. */
  async function mailedTokens(count: number): Promise<string[]> {
    const dir = join(cluster.env.DATA_DIR, 'mail');
    const deadline = Date.now() + 30_000;
    for (;;) {
      let files: string[] = [];
      try {
        files = readdirSync(dir).filter((f) => f.endsWith('portal_sign_in.eml'));
      } catch {
        // Not written yet.
      }
      if (files.length >= count) {
        const texts = await Promise.all(files.map(async (f) => (await simpleParser(readFileSync(join(dir, f)))).text ?? ''));
        return texts.map((text) => /\/portal\/sign-in\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? '');
      }
      if (Date.now() > deadline) throw new Error(`${files.length} sign-in messages, expected ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('counts one address across both instances (5 links for 8 requests) and shares the session', async () => {
    const email = 'cluster.customer@shop.example';
    const created = await fetch(`${a.url}/api/v1/admin/licenses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': cluster.apiKey },
      body: JSON.stringify({
        product_code: 'POS_RETAIL',
        license_type: 'YEARLY',
        customer_name: 'Cluster Customer',
        customer_email: email,
      }),
    });
    expect(created.status).toBe(201);
    const license = (await created.json()) as { id: number };
    for (let i = 0; i < 8; i++) expect(await askForLink(i % 2 ? b : a, email)).toBe(200);
    const tokens = await mailedTokens(5);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const db = new Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM portal_sign_in_tokens WHERE email = $1`, [email]);
      expect(rows[0].n).toBe(5);
    } finally {
      await db.end();
    }

    // Open the link on B, press the button on B: the session cookie then works on A.
    const page = await fetch(`${b.url}/portal/sign-in?token=${tokens[0]}`);
    expect(page.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const signIn = await fetch(`${b.url}/portal/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieOf(page, 'portal_form') },
      body: new URLSearchParams({ token: tokens[0], _csrf: csrf }).toString(),
    });
    expect(signIn.status).toBe(303);
    const session = cookieOf(signIn, 'portal_session');
    expect(session).not.toBe('');
    const sid = decodeURIComponent(session.slice('portal_session='.length)).slice(2).split('.')[0];
    expect(await cluster.redis.ttl(`portal-sess:${sid}`)).toBeGreaterThan(8 * 3600 - 60);
    const onA = await fetch(`${a.url}/portal/licenses/${license.id}`, { redirect: 'manual', headers: { cookie: session } });
    expect(onA.status).toBe(200);
    expect(await onA.text()).toContain(email);
    // The staff dashboard on either instance does not take it.
    const dashboard = await fetch(`${a.url}/dashboard`, { redirect: 'manual', headers: { cookie: session } });
    expect(dashboard.status).toBe(302);
  });
});
