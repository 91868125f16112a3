import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { csrfFrom, loggedInAgent, type Agent } from './dashboard-helpers';
import { PORTAL_LICENCE_NOT_FOUND, PORTAL_MACHINE_NOT_FOUND } from '../src/portal/portal-http';
import { createLicense, fannedOut, insertSeat, setLicenseExpiry } from './support/factories';
import { startSmtpServer } from './support/smtp-server';
import { createTestApp, type TestApp } from './support/test-app';

// Links travel through the job engine and a real SMTP server.
jest.setTimeout(60_000);

type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;

/** A response on its way, checked like supertest's: `.expect(status)` and `.expect(header, value)` chain. */
type Answer = Promise<request.Response> & { expect(status: number): Answer; expect(header: string, value: string): Answer };
function answer(pending: Promise<request.Response>): Answer {
  const a = pending as Answer;
  a.expect = (what: number | string, value?: string) =>
    answer(
      pending.then((res) => {
        if (typeof what === 'number')
          expect({ status: res.status, text: res.status === what ? '' : res.text }).toEqual({ status: what, text: '' });
        else expect(res.headers[what.toLowerCase()]).toBe(value);
        return res;
      }),
    );
  return a;
}
/** Text as the page shows it (the view engine escapes ' and &). */
const unescapeHtml = (html: string) => html.replace(/&#x27;/g, "'").replace(/&amp;/g, '&');
const STRIPE_PORTAL = 'https://billing.stripe.com/p/login/test_portal';
const LINK = /https:\/\/licences\.example\.test\/portal\/sign-in\?token=([A-Za-z0-9_-]+)/;

describe('customer portal (docs/portal.md)', () => {
  let t: TestApp;
  let smtp: Smtp;
  let seq = 0;
  let ipSeq = 0;
  /** A fresh address per test, so the per-address limit of one test never touches another. */
  const address = (name: string) => `${name}-${++seq}@shop.example`;
  const agent = (): Agent => request.agent(t.app.getHttpServer() as Server);

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      // The many-IP tests name their client IP with X-Forwarded-For; loopback is the only proxy trusted.
      trustProxy: 'loopback',
      mail: { smtpUrl: smtp.url, from: 'keys@vendor.example', brandName: 'Vendor Soft', disabledKinds: [], retryScheduleSeconds: [1, 1] },
      portal: { enabled: true, loginLimit: 5, storePortalUrls: { stripe: STRIPE_PORTAL } },
    });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  /** POSTs the sign-in form as a browser would (its own form token), optionally from a given client IP. */
  function askForLink(email: string, options: { as?: Agent; ip?: string } = {}): Answer {
    const client = options.as ?? agent();
    // Each request from its own client IP unless the test names one, so the per-IP limit counts only where a test means it.
    const ip = options.ip ?? `10.0.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;
    const withIp = (r: request.Test) => r.set('X-Forwarded-For', ip);
    return answer(
      (async () => {
        const page = await withIp(client.get('/portal/login')).expect(200);
        return withIp(
          client
            .post('/portal/login')
            .type('form')
            .send({ email, _csrf: csrfFrom(page.text) }),
        );
      })(),
    );
  }
  /** The token of the `n`th sign-in message to `email`. */
  async function tokenFor(email: string, n = 1): Promise<string> {
    const mails = await smtp.waitFor(n, (m) => m.envelopeTo.includes(email.trim().toLowerCase()));
    const match = LINK.exec(mails[n - 1].parsed.text ?? '');
    if (!match) throw new Error(`no sign-in link in ${mails[n - 1].parsed.text}`);
    return match[1];
  }
  /** Opens the link (GET) and presses its button (POST); returns the POST's answer. */
  function useLink(client: Agent, token: string): Answer {
    return answer(
      (async () => {
        const page = await client.get(`/portal/sign-in?token=${encodeURIComponent(token)}`);
        const formToken = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
        return client.post('/portal/sign-in').type('form').send({ token, _csrf: formToken });
      })(),
    );
  }
  /** A customer with one licence and a signed-in portal session. */
  async function signedIn(overrides: Record<string, unknown> = {}) {
    const email = address('buyer');
    const license = await createLicense(t, { customer_email: email, customer_name: 'Buyer', ...overrides });
    await askForLink(email).expect(200);
    const client = agent();
    await useLink(client, await tokenFor(email))
      .expect(303)
      .expect('Location', '/portal');
    return { email, license, client, csrf: async (page = '/portal') => csrfFrom((await client.get(page).expect(200)).text) };
  }
  const sentTo = async (email: string) =>
    (
      await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM mail_messages WHERE kind = 'portal_sign_in' AND to_address = $1`, [email])
    )[0].n;
  const linksOf = async (email: string) =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM portal_sign_in_tokens WHERE email = $1`, [email]))[0].n;
  /** Waits until the background link requests have written what they will write. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

  describe('signing in by e-mail link', () => {
    it('answers a known and an unknown address with the same page; only the known one gets a link', async () => {
      const known = address('known');
      await createLicense(t, { customer_email: known });
      const unknown = address('unknown');
      const a = await askForLink(known).expect(200);
      const b = await askForLink(unknown).expect(200);
      expect(a.text).toBe(b.text);
      expect(a.text).toContain('If we know this address, a sign-in link is on its way');
      const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes(known));
      expect(mail.parsed.subject).toBe('Sign in to Vendor Soft');
      expect(mail.parsed.text).toMatch(LINK);
      expect(mail.parsed.html).toContain('href="https://licences.example.test/portal/sign-in?token&#x3D;');
      await settle();
      expect(await sentTo(unknown)).toBe(0);
      expect(await linksOf(unknown)).toBe(0);
    });

    it('stores only the hash of a link: neither the tokens table nor the mail outbox holds the token', async () => {
      const email = address('hashed');
      await createLicense(t, { customer_email: email });
      await askForLink(email).expect(200);
      const token = await tokenFor(email);
      const [row] = await t.sql<{ token_hash: string }>(`SELECT token_hash FROM portal_sign_in_tokens WHERE email = $1`, [email]);
      expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
      const dump =
        JSON.stringify(await t.sql(`SELECT * FROM portal_sign_in_tokens`)) + JSON.stringify(await t.sql(`SELECT data FROM mail_messages`));
      expect(dump).not.toContain(token);
    });

    it('finds the licence whatever the case of the address, and signs in as the lower-cased address', async () => {
      const email = address('Mixed.Case');
      const license = await createLicense(t, { customer_email: email.toUpperCase() });
      await askForLink(`  ${email.toLowerCase()}  `).expect(200);
      const client = agent();
      await useLink(client, await tokenFor(email)).expect(303);
      const list = await client.get('/portal').expect(200);
      expect(list.text).toContain(`href="/portal/licenses/${license.id}"`);
      expect(list.text).toContain(email.toLowerCase());
    });

    it('refuses an empty or malformed address next to the field (400) and sends nothing', async () => {
      const res = await askForLink('not-an-address').expect(400);
      expect(res.text).toContain('id="field-email-error"');
      expect(res.text).toContain('aria-invalid="true"');
      expect(res.text).toContain('value="not-an-address"');
      await askForLink('   ').expect(400);
      await askForLink('a@b.example\r\nBcc: x@evil.example').expect(400);
    });

    it('attacker: a mail scanner GETs the link first; the link still works for the customer, once', async () => {
      const email = address('scanned');
      await createLicense(t, { customer_email: email });
      await askForLink(email).expect(200);
      const token = await tokenFor(email);
      const scanner = agent();
      for (let i = 0; i < 3; i++) {
        const page = await scanner.get(`/portal/sign-in?token=${token}`).expect(200);
        expect(page.text).toContain('data-testid="sign-in"');
      }
      const customer = agent();
      await useLink(customer, token).expect(303).expect('Location', '/portal');
      await customer.get('/portal').expect(200);
    });

    it('attacker: a link used a second time is refused (400), and a used link shows no button', async () => {
      const email = address('reused');
      await createLicense(t, { customer_email: email });
      await askForLink(email).expect(200);
      const token = await tokenFor(email);
      await useLink(agent(), token).expect(303);
      const again = agent();
      const page = await again.get(`/portal/sign-in?token=${token}`).expect(400);
      expect(page.text).not.toContain('data-testid="sign-in"');
      expect(page.text).toContain('expired, was already used');
      await useLink(again, token).expect(400);
      await again.get('/portal').expect(302).expect('Location', '/portal/login');
    });

    it('attacker: an expired link (older than 15 minutes) is refused', async () => {
      const email = address('expired');
      await createLicense(t, { customer_email: email });
      await askForLink(email).expect(200);
      const token = await tokenFor(email);
      const [row] = await t.sql<{ minutes: number }>(
        `SELECT round(extract(epoch FROM expires_at - created_at) / 60)::int AS minutes FROM portal_sign_in_tokens WHERE email = $1`,
        [email],
      );
      expect(row.minutes).toBe(15);
      await t.sql(`UPDATE portal_sign_in_tokens SET expires_at = now() - interval '1 second' WHERE email = $1`, [email]);
      const client = agent();
      await useLink(client, token).expect(400);
      await client.get('/portal').expect(302);
    });

    it('attacker: altered, truncated, padded or missing tokens are refused and burn nothing', async () => {
      const email = address('altered');
      await createLicense(t, { customer_email: email });
      await askForLink(email).expect(200);
      const token = await tokenFor(email);
      const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      for (const bad of [flipped, token.slice(0, -1), `${token}x`, '', "' OR 1=1 --", token.toUpperCase()]) {
        if (bad === token) continue;
        const client = agent();
        await useLink(client, bad).expect(400);
        await client.get('/portal').expect(302);
      }
      await agent().get('/portal/sign-in').expect(400);
      await useLink(agent(), token).expect(303);
    });

    it('attacker: a link used after the licence’s e-mail changed signs nobody in', async () => {
      const email = address('moved');
      const license = await createLicense(t, { customer_email: email });
      await askForLink(email).expect(200);
      const token = await tokenFor(email);
      await t.admin
        .put(`/api/v1/admin/licenses/${license.id}`)
        .send({ customer_email: address('new-owner') })
        .expect(200);
      const client = agent();
      await useLink(client, token).expect(400);
      await client.get('/portal').expect(302);
    });

    it('a session opened before the e-mail changed loses that licence at once (404)', async () => {
      const { license, client } = await signedIn();
      await client.get(`/portal/licenses/${license.id}`).expect(200);
      await t.admin
        .put(`/api/v1/admin/licenses/${license.id}`)
        .send({ customer_email: address('next-owner') })
        .expect(200);
      await client.get(`/portal/licenses/${license.id}`).expect(404);
      expect((await client.get('/portal').expect(200)).text).not.toContain(`/portal/licenses/${license.id}"`);
    });

    it('attacker: 100 sign-in requests for one address from 100 IPs send 5 links; every answer is the same page', async () => {
      const email = address('flooded');
      await createLicense(t, { customer_email: email });
      const texts = new Set<string>();
      for (let i = 0; i < 100; i++) {
        const res = await askForLink(email, { ip: `198.51.100.${i + 1}` }).expect(200);
        texts.add(res.text);
      }
      expect(texts.size).toBe(1);
      await settle();
      expect(await linksOf(email)).toBe(5);
      expect(await sentTo(email)).toBe(5);
    });

    it('limits one IP across addresses, known or not: the 6th request in 15 minutes sends nothing', async () => {
      const ip = '203.0.113.9';
      const emails = Array.from({ length: 7 }, () => address('same-ip'));
      for (const email of emails.slice(4)) await createLicense(t, { customer_email: email });
      for (const email of emails) await askForLink(email, { ip }).expect(200);
      await settle();
      // Requests 1-4 were unknown addresses, 5 was known (sent), 6 and 7 were over the IP's limit.
      expect(await linksOf(emails[4])).toBe(1);
      expect(await linksOf(emails[5])).toBe(0);
      expect(await linksOf(emails[6])).toBe(0);
    });

    it('attacker: the sign-in forms need their form token (403) and a refused POST burns no link', async () => {
      const email = address('csrf');
      await createLicense(t, { customer_email: email });
      await agent().post('/portal/login').type('form').send({ email }).expect(403);
      await settle();
      expect(await linksOf(email)).toBe(0);
      await askForLink(email).expect(200);
      const token = await tokenFor(email);
      await agent().post('/portal/sign-in').type('form').send({ token, _csrf: 'forged' }).expect(403);
      await useLink(agent(), token).expect(303);
    });

    it('records the sign-in in the audit log with the customer as actor', async () => {
      const { email } = await signedIn();
      const entries = await t.sql(`SELECT action, actor_type, actor FROM audit_entries WHERE actor = $1`, [email]);
      expect(entries).toEqual([{ action: 'auth.login', actor_type: 'customer', actor: email }]);
    });

    it('ends a session 8 hours after sign-in, however active', async () => {
      const { client } = await signedIn();
      await client.get('/portal').expect(200);
      await t.sql(
        `UPDATE portal_session SET sess = jsonb_set(sess::jsonb, '{portal,signedInAt}', to_jsonb((extract(epoch FROM now() - interval '8 hours 1 minute') * 1000)::bigint))::json`,
      );
      await client.get('/portal').expect(302).expect('Location', '/portal/login');
    });

    it('signing out ends the session', async () => {
      const { client, csrf } = await signedIn();
      await client
        .post('/portal/logout')
        .type('form')
        .send({ _csrf: await csrf() })
        .expect(303)
        .expect('Location', '/portal/login');
      await client.get('/portal').expect(302).expect('Location', '/portal/login');
    });
  });

  describe('isolation', () => {
    it('attacker: another customer’s licence id, an unknown id and a malformed id are all 404, in the same customer words', async () => {
      const other = await createLicense(t, { customer_email: address('other') });
      const { client } = await signedIn();
      for (const id of [other.id, 99_999_999, '0', 'abc', '1e3', `${other.id}.0`]) {
        const page = (await client.get(`/portal/licenses/${id}`).expect(404)).text;
        expect(page).toContain(PORTAL_LICENCE_NOT_FOUND);
        expect(page).not.toMatch(/Licen[cs]e not found/);
      }
      expect((await client.get('/portal').expect(200)).text).not.toContain(`/portal/licenses/${other.id}"`);
    });

    it('attacker: releasing or downloading through another customer’s licence or seat is 404 and changes nothing', async () => {
      const other = await createLicense(t, { customer_email: address('victim') });
      const otherSeat = await insertSeat(t, other.id, { hostname: 'victim-pc' });
      const { license, client, csrf } = await signedIn();
      const ownSeat = await insertSeat(t, license.id, { hostname: 'own-pc' });
      const token = await csrf(`/portal/licenses/${license.id}`);
      const post = (url: string) => client.post(url).type('form').send({ _csrf: token });
      expect((await post(`/portal/licenses/${other.id}/machines/${otherSeat.id}/release`).expect(404)).text).toContain(
        PORTAL_LICENCE_NOT_FOUND,
      );
      await post(`/portal/licenses/${other.id}/machines/${otherSeat.id}/license-file`).expect(404);
      // Own licence, another licence's seat (or a malformed one).
      expect((await post(`/portal/licenses/${license.id}/machines/${otherSeat.id}/release`).expect(404)).text).toContain(
        PORTAL_MACHINE_NOT_FOUND,
      );
      expect((await post(`/portal/licenses/${license.id}/machines/x/release`).expect(404)).text).toContain(PORTAL_MACHINE_NOT_FOUND);
      await post(`/portal/licenses/${license.id}/machines/${otherSeat.id}/license-file`).expect(404);
      // Another licence, own seat.
      await post(`/portal/licenses/${other.id}/machines/${ownSeat.id}/release`).expect(404);
      const [row] = await t.sql<{ released_at: Date | null }>(`SELECT released_at FROM activations WHERE id = $1`, [otherSeat.id]);
      expect(row.released_at).toBeNull();
    });

    it('attacker: a portal session opens no admin API or dashboard route', async () => {
      const { client } = await signedIn();
      await client.get('/api/v1/admin/licenses').expect(401);
      await client.get('/api/v1/admin/products').expect(401);
      await client.get('/licenses').expect(302).expect('Location', '/login');
      await client.get('/licenses/1').expect(302).expect('Location', '/login');
      await client.get('/dashboard').expect(302).expect('Location', '/login');
      await client.get('/audit').expect(302).expect('Location', '/login');
    });

    it('attacker: a staff session is not a portal session, even with its cookie renamed to portal_session', async () => {
      const { agent: staff } = await loggedInAgent(t);
      await staff.get('/dashboard').expect(200);
      await staff.get('/portal').expect(302).expect('Location', '/portal/login');
      const staffCookie = (await loggedInCookie()).replace(/^licence_session=/, 'portal_session=');
      await request(t.app.getHttpServer() as Server)
        .get('/portal')
        .set('Cookie', staffCookie)
        .expect(302)
        .expect('Location', '/portal/login');
    });

    it('attacker: a portal cookie used as the staff cookie opens no dashboard page', async () => {
      const { client } = await signedIn();
      const cookie = cookieOf(client, 'portal_session');
      await request(t.app.getHttpServer() as Server)
        .get('/dashboard')
        .set('Cookie', `licence_session=${cookie}`)
        .expect(302)
        .expect('Location', '/login');
    });

    it('sets portal_session httpOnly, SameSite=Lax, on /portal only', async () => {
      const email = address('cookie');
      await createLicense(t, { customer_email: email });
      await askForLink(email).expect(200);
      const client = agent();
      const res = await useLink(client, await tokenFor(email)).expect(303);
      const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('portal_session='));
      expect(setCookie).toMatch(/Path=\/portal;/);
      expect(setCookie).toMatch(/HttpOnly/);
      expect(setCookie).toMatch(/SameSite=Lax/);
    });

    async function loggedInCookie(): Promise<string> {
      const server = t.app.getHttpServer() as Server;
      const page = await request(server).get('/login').expect(200);
      const loginCookie = ([] as string[]).concat(page.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]);
      const res = await request(server)
        .post('/login')
        .set('Cookie', loginCookie.join('; '))
        .type('form')
        .send({ username: 'admin', password: 'test-password-123', _csrf: csrfFrom(page.text) })
        .expect(303);
      const session = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('licence_session='));
      return (session as string).split(';')[0];
    }
  });

  describe('downloads (docs/portal.md, Downloads)', () => {
    it('lists the releases the licence may download, newest first, with signed links; never a draft or a release it lacks a feature for', async () => {
      const { license, client } = await signedIn({ features: [] });
      const productId = (await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'POS_RETAIL'`))[0].id;
      const release = async (version: string, published: boolean, features: string[] = []) => {
        const [{ id }] = await t.sql<{ id: number }>(
          `INSERT INTO releases (product_id, version, published_at, required_features) VALUES ($1, $2, $3, $4) RETURNING id`,
          [productId, version, published ? new Date() : null, JSON.stringify(features)],
        );
        await t.sql(
          `INSERT INTO release_artifacts (release_id, filename, platform, arch, size, sha256, sha512, storage_key)
           VALUES ($1, $2, 'win32', 'x64', 10, repeat('a', 64), repeat('b', 128), $3)`,
          [id, `Till-${version}.exe`, `k/${id}`],
        );
      };
      await release('30.0.0', true);
      await release('30.1.0', true);
      await release('31.0.0', false);
      await release('32.0.0', true, ['REPORTS']);
      const html = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      const versions = [...html.matchAll(/data-testid="download-release">\s*<h3><span class="mono">([^<]+)</g)].map((m) => m[1]);
      expect(versions).toEqual(['30.1.0', '30.0.0']);
      expect(html).toMatch(/href="https:\/\/licences\.example\.test\/api\/v1\/releases\/downloads\/[^"]+\/Till-30\.1\.0\.exe"/);
      await t.sql(`DELETE FROM releases WHERE version IN ('30.0.0', '30.1.0', '31.0.0', '32.0.0')`);
      expect((await client.get(`/portal/licenses/${license.id}`).expect(200)).text).toContain('data-testid="no-downloads"');
    });
  });

  describe('licences and machines', () => {
    it('lists status, expiry, seats used and allowed; the licence page shows machines, the key behind a reveal, and a copy button', async () => {
      const { license, client } = await signedIn({ limits: { max_installations: 3 } });
      await insertSeat(t, license.id, { hostname: 'office-pc', os: 'Windows 11' });
      const list = (await client.get('/portal').expect(200)).text;
      expect(list).toContain('Retail Point of Sale');
      expect(list).toContain('1 of 3');
      expect(list).toContain('badge-active');
      expect(list).not.toContain(license.license_key);
      const page = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      expect(page).toContain('office-pc');
      expect(page).toContain('<details data-testid="reveal-key">');
      expect(page).toContain(`data-copy="${license.license_key}"`);
      expect(page).toContain('1 of 3 in use');
    });

    it('names each licence link by product, the key’s last group and the expiry, in the customer’s words', async () => {
      const { email, license, client } = await signedIn({ license_type: 'YEARLY' });
      await setLicenseExpiry(t, license.id, new Date('2030-01-31T23:59:59Z'));
      const forever = await createLicense(t, { customer_email: email, license_type: 'PERPETUAL', product_code: 'ERP_SUITE' });
      const ended = await createLicense(t, { customer_email: email, license_type: 'MONTHLY' });
      await setLicenseExpiry(t, ended.id, new Date('2020-03-01T12:00:00Z'), 0);
      const list = unescapeHtml((await client.get('/portal').expect(200)).text);
      const links = [...list.matchAll(/data-testid="portal-license-link">([^<]+)</g)].map((m) => m[1]).sort();
      const last = (key: string) => key.split('-').pop() as string;
      expect(links).toEqual(
        [
          `Retail Point of Sale, key ending ${last(license.license_key)}, valid until 31 January 2030`,
          `ERP Suite, key ending ${last(forever.license_key)}, never expires`,
          `Retail Point of Sale, key ending ${last(ended.license_key)}, ended on 1 March 2020`,
        ].sort(),
      );
      // Staff words (the licence type's code) are not in the customer's list.
      expect(list).not.toMatch(/\b(YEARLY|PERPETUAL|MONTHLY)\b/);
    });

    it('"Free this machine" asks on a page of its own (no script): the GET changes nothing, its form’s POST frees the machine', async () => {
      const { license, client } = await signedIn({ policy: { max_deactivations_per_30_days: 3 } });
      const seat = await insertSeat(t, license.id, { hostname: 'old-laptop', os: 'Windows 10' });
      const licencePage = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      const confirmUrl = `/portal/licenses/${license.id}/machines/${seat.id}/release`;
      // The licence page links to the question; it holds no form that frees at once.
      expect(licencePage).toContain(`href="${confirmUrl}"`);
      expect(licencePage).not.toContain(`action="${confirmUrl}"`);
      const question = (await client.get(confirmUrl).expect(200)).text;
      expect(question).toContain('Free old-laptop?');
      expect(question).toContain('3 time(s) in 30 days');
      expect(question).toContain(`action="${confirmUrl}"`);
      expect(question).toContain(`href="/portal/licenses/${license.id}"`);
      const stillBound = async () => (await t.sql(`SELECT released_at FROM activations WHERE id = $1`, [seat.id]))[0].released_at === null;
      expect(await stillBound()).toBe(true);
      // Without the form's token nothing happens.
      await client.post(confirmUrl).type('form').send({}).expect(403);
      expect(await stillBound()).toBe(true);
      await client
        .post(confirmUrl)
        .type('form')
        .send({ _csrf: csrfFrom(question) })
        .expect(303)
        .expect('Location', `/portal/licenses/${license.id}`);
      expect(await stillBound()).toBe(false);
      expect((await client.get(`/portal/licenses/${license.id}`).expect(200)).text).toContain('old-laptop was freed');
    });

    it('attacker: the confirmation page of another customer’s machine is the same 404 as an unknown one', async () => {
      const other = await createLicense(t, { customer_email: address('victim') });
      const otherSeat = await insertSeat(t, other.id, { hostname: 'victim-pc' });
      const { license, client } = await signedIn();
      const page = (await client.get(`/portal/licenses/${other.id}/machines/${otherSeat.id}/release`).expect(404)).text;
      expect(page).toContain(PORTAL_LICENCE_NOT_FOUND);
      expect(page).not.toContain('victim-pc');
      expect((await client.get(`/portal/licenses/${license.id}/machines/${otherSeat.id}/release`).expect(404)).text).toContain(
        PORTAL_MACHINE_NOT_FOUND,
      );
    });

    it('releases a machine as a client deactivation with the customer as audit actor; no seat_released mail', async () => {
      const { email, license, client, csrf } = await signedIn();
      const seat = await insertSeat(t, license.id, { hostname: 'old-laptop' });
      const token = await csrf(`/portal/licenses/${license.id}`);
      await client
        .post(`/portal/licenses/${license.id}/machines/${seat.id}/release`)
        .type('form')
        .send({ _csrf: token })
        .expect(303)
        .expect('Location', `/portal/licenses/${license.id}`);
      const page = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      expect(page).toContain('old-laptop was freed');
      const [row] = await t.sql(`SELECT released_at, release_reason FROM activations WHERE id = $1`, [seat.id]);
      expect(row.release_reason).toBe('deactivated');
      const audit = await t.sql(`SELECT action, actor_type, actor FROM audit_entries WHERE license_id = $1 AND actor_type = 'customer'`, [
        license.id,
      ]);
      expect(audit).toEqual([expect.objectContaining({ actor_type: 'customer', actor: email })]);
      await fannedOut(t);
      expect((await t.sql(`SELECT kind FROM mail_messages WHERE license_id = $1`, [license.id])).map((r) => r.kind)).not.toContain(
        'seat_released',
      );
    });

    it('records an address of 254 characters whole as the audit actor', async () => {
      const local = `l${++seq}`.padEnd(64, 'x');
      const email = `${local}@${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(59)}.example`;
      expect(email).toHaveLength(254);
      const license = await createLicense(t, { customer_email: email });
      // The test SMTP server refuses addresses this long, so the link is made here, as the service makes it.
      const token = randomBytes(32).toString('base64url');
      await t.sql(`INSERT INTO portal_sign_in_tokens (token_hash, email, expires_at) VALUES ($1, $2, now() + interval '15 minutes')`, [
        createHash('sha256').update(token).digest('hex'),
        email,
      ]);
      const client = agent();
      await useLink(client, token).expect(303);
      const seat = await insertSeat(t, license.id);
      const csrf = csrfFrom((await client.get(`/portal/licenses/${license.id}`).expect(200)).text);
      await client.post(`/portal/licenses/${license.id}/machines/${seat.id}/release`).type('form').send({ _csrf: csrf }).expect(303);
      const [entry] = await t.sql(`SELECT actor FROM audit_entries WHERE license_id = $1 AND actor_type = 'customer'`, [license.id]);
      expect(entry.actor).toBe(email);
    });

    it('attacker: releasing over max_deactivations_per_30_days is refused in plain words; the seat stays bound', async () => {
      const { license, client, csrf } = await signedIn({ policy: { max_deactivations_per_30_days: 1 }, limits: { max_installations: 2 } });
      const first = await insertSeat(t, license.id, { hostname: 'first-pc' });
      const second = await insertSeat(t, license.id, { hostname: 'second-pc' });
      const token = await csrf(`/portal/licenses/${license.id}`);
      const release = (id: number) =>
        client.post(`/portal/licenses/${license.id}/machines/${id}/release`).type('form').send({ _csrf: token });
      await release(first.id).expect(303);
      await release(second.id).expect(303);
      const page = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      expect(page).toMatch(
        /The machine is still bound: this licence lets you free a machine once in 30 days, and that has been used up\. You can free one again after \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
      );
      expect(page).toContain('role="alert"');
      const [row] = await t.sql(`SELECT released_at FROM activations WHERE id = $1`, [second.id]);
      expect(row.released_at).toBeNull();
    });

    it('a limit of 0 says a machine cannot be freed here', async () => {
      const { license, client, csrf } = await signedIn({ policy: { max_deactivations_per_30_days: 0 } });
      const seat = await insertSeat(t, license.id);
      const token = await csrf(`/portal/licenses/${license.id}`);
      await client.post(`/portal/licenses/${license.id}/machines/${seat.id}/release`).type('form').send({ _csrf: token }).expect(303);
      expect((await client.get(`/portal/licenses/${license.id}`).expect(200)).text).toContain('cannot be freed here');
    });

    it('downloads a licence file for a bound machine, recorded with the customer as actor', async () => {
      const { email, license, client, csrf } = await signedIn();
      const seat = await insertSeat(t, license.id, { hostname: 'till-1' });
      const token = await csrf(`/portal/licenses/${license.id}`);
      const res = await client
        .post(`/portal/licenses/${license.id}/machines/${seat.id}/license-file`)
        .type('form')
        .send({ _csrf: token })
        .buffer(true)
        .parse((r, cb) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString('utf8')));
          r.on('end', () => cb(null, text));
        })
        .expect(200);
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${license.license_key}.lic"`);
      expect(String(res.body)).toMatch(/^-----BEGIN LICENSE FILE-----\n/);
      const [entry] = await t.sql(`SELECT actor_type, actor FROM audit_entries WHERE license_id = $1 AND action = 'license.file_issued'`, [
        license.id,
      ]);
      expect(entry).toEqual({ actor_type: 'customer', actor: email });
    });

    it('a revoked licence gives no licence file: the page says why (no error page)', async () => {
      const { license, client, csrf } = await signedIn();
      const seat = await insertSeat(t, license.id, { hostname: 'till-9' });
      await t.admin.post(`/api/v1/admin/licenses/${license.id}/revoke`).send({ reason: 'refund' }).expect(200);
      const token = await csrf(`/portal/licenses/${license.id}`);
      await client
        .post(`/portal/licenses/${license.id}/machines/${seat.id}/license-file`)
        .type('form')
        .send({ _csrf: token })
        .expect(303)
        .expect('Location', `/portal/licenses/${license.id}`);
      const page = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      expect(page).toContain('data-testid="portal-flash"');
      expect(page).toContain('badge-revoked');
    });

    it('attacker: every portal POST needs the session’s CSRF token (403, nothing changes)', async () => {
      const { license, client } = await signedIn();
      const seat = await insertSeat(t, license.id);
      await client.post(`/portal/licenses/${license.id}/machines/${seat.id}/release`).type('form').send({}).expect(403);
      await client.post(`/portal/licenses/${license.id}/machines/${seat.id}/release`).type('form').send({ _csrf: 'forged' }).expect(403);
      await client.post(`/portal/licenses/${license.id}/machines/${seat.id}/license-file`).type('form').send({}).expect(403);
      await client.post('/portal/logout').type('form').send({}).expect(403);
      const [row] = await t.sql(`SELECT released_at FROM activations WHERE id = $1`, [seat.id]);
      expect(row.released_at).toBeNull();
    });

    it('links a store-made licence to the store’s own customer portal', async () => {
      const { license, client } = await signedIn();
      await t.sql(`UPDATE licenses SET store_name = 'stripe', store_customer_id = 'cus_1', store_subscription_id = 'sub_1' WHERE id = $1`, [
        license.id,
      ]);
      const page = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      expect(page).toContain(`href="${STRIPE_PORTAL}"`);
      expect(page).toContain('Stripe');
    });

    it('escapes what staff or a store typed (hostname) and answers unknown portal paths with a 404 page', async () => {
      const { license, client } = await signedIn();
      await insertSeat(t, license.id, { hostname: '<script>alert(1)</script>' });
      const page = (await client.get(`/portal/licenses/${license.id}`).expect(200)).text;
      expect(page).not.toContain('<script>alert(1)</script>');
      expect((await client.get('/portal/nothing-here').expect(404)).text).toContain('Not found');
    });
  });

  function cookieOf(client: Agent, name: string): string {
    const jar = (client as unknown as { jar: { getCookie: (n: string, o: unknown) => { value: string } | undefined } }).jar;
    const cookie = jar.getCookie(name, { domain: '127.0.0.1', path: '/portal', secure: false, script: false });
    if (!cookie) throw new Error(`no ${name} cookie`);
    return `${name}=${cookie.value}`.slice(name.length + 1);
  }
});

describe('PORTAL_ENABLED=false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ portal: { enabled: false, loginLimit: 5, storePortalUrls: {} } });
  }, 60_000);
  afterAll(() => t.close());

  it('answers every portal page with 404', async () => {
    const server = t.app.getHttpServer() as Server;
    await request(server).get('/portal').expect(404);
    await request(server).get('/portal/login').expect(404);
    await request(server).post('/portal/login').type('form').send({ email: 'a@b.example' }).expect(404);
    await request(server).get('/portal/sign-in?token=x').expect(404);
  });
});
