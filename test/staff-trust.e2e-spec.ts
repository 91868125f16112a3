import request from 'supertest';
import { Secret, TOTP } from 'otpauth';
import type { Server } from 'node:http';
import { ADMIN, csrfFrom, loggedInAgent, postForm, unescape, type Agent } from './dashboard-helpers';
import { SoftAuthenticator } from './support/soft-authenticator';
import { createTestApp, type TestApp } from './support/test-app';

jest.setTimeout(60_000);

const ORIGIN = 'https://licences.example.test';

/**
 * Staff accounts a team can trust (docs/security.md, Sudo mode; Owners; Invitations; Sessions): each test plays the
 * attacker or the careless team member the rule is for.
 */
describe('staff accounts a team can trust', () => {
  let t: TestApp;
  let admin: Agent;
  let token: (page?: string) => Promise<string>;

  beforeAll(async () => {
    t = await createTestApp({ publicUrl: ORIGIN });
    ({ agent: admin, token } = await loggedInAgent(t));
  }, 60_000);
  afterAll(() => t?.close(), 60_000);

  const newAgent = () => request.agent(t.app.getHttpServer() as Server);
  const sessions = async () => Number((await t.sql(`SELECT count(*)::int AS n FROM session`))[0].n);
  /** What an attacker holds with a stolen cookie: a session whose owner proved themselves long ago. */
  const ageSudo = () => t.sql(`UPDATE session SET sess = (sess::jsonb || '{"sudoAt": 0}'::jsonb)::json`);
  const adminId = async () => Number((await t.sql(`SELECT id FROM users WHERE username = 'admin'`))[0].id);
  const passkeysOf = async (username: string) =>
    Number(
      (await t.sql(`SELECT count(*)::int AS n FROM staff_passkeys p JOIN users u ON u.id = p.user_id WHERE u.username = $1`, [username]))[0]
        .n,
    );
  const securityToken = () => token('/account/security');

  async function addPasskey(agent: Agent, csrf: string, authenticator: SoftAuthenticator) {
    const options = await postForm(agent, csrf, '/account/security/passkeys/options').expect(200);
    return postForm(agent, csrf, '/account/security/passkeys', { response: JSON.stringify(authenticator.register(options.body)) });
  }

  async function invite(agent: Agent, csrf: string, fields: Record<string, string | string[]>) {
    const res = await postForm(agent, csrf, '/staff/invites', fields);
    const url = /id="invite-url"[^>]*value="([^"]+)"/.exec(res.text)?.[1];
    return { res, path: url ? unescape(url).slice(ORIGIN.length) : undefined };
  }

  async function accept(path: string, password = 'a-new-password-1') {
    const agent = newAgent();
    const page = await agent.get(path).expect(200);
    const res = await agent
      .post(path)
      .type('form')
      .send({ password, password_repeat: password, _csrf: csrfFrom(page.text) });
    return { agent, res };
  }

  describe('sudo mode', () => {
    afterEach(async () => {
      // Each test starts from a fresh proof.
      await t.sql(
        `UPDATE session SET sess = (sess::jsonb || jsonb_build_object('sudoAt', (extract(epoch FROM now()) * 1000)::bigint))::json`,
      );
    });

    it('a stolen session cookie cannot add a passkey, and every sensitive action asks to confirm access first', async () => {
      const csrf = await securityToken();
      await ageSudo();
      const thief = new SoftAuthenticator(ORIGIN);
      const options = await postForm(admin, csrf, '/account/security/passkeys/options').expect(303);
      expect(options.headers.location).toBe('/account/sudo?return_to=%2Faccount%2Fsecurity');
      const added = await postForm(admin, csrf, '/account/security/passkeys', {
        response: JSON.stringify(thief.register({ challenge: 'Y2hhbGxlbmdl' })),
      }).expect(303);
      expect(added.headers.location).toMatch(/^\/account\/sudo\?return_to=/);
      expect(await passkeysOf('admin')).toBe(0);
      for (const [url, fields] of [
        ['/account/security/totp', {}],
        ['/tokens', { name: 'stolen', scopes: 'licenses:read' }],
        ['/webhooks', { url: 'https://evil.example/hook' }],
        ['/signing-keys/rotate', {}],
        ['/staff/invites', { username: 'mallory', email: 'mallory@example.test', role: 'owner' }],
        [`/staff/${await adminId()}/access`, { role: 'owner' }],
      ] as const) {
        const res = await postForm(admin, csrf, url, fields);
        expect([url, res.status, res.headers.location]).toEqual([url, 303, expect.stringMatching(/^\/account\/sudo\?return_to=/)]);
      }
      expect(await t.sql(`SELECT id FROM admin_tokens WHERE name = 'stolen'`)).toEqual([]);
      expect(await t.sql(`SELECT id FROM staff_invites WHERE username = 'mallory'`)).toEqual([]);
      expect(await t.sql(`SELECT user_id FROM staff_totp_secrets`)).toEqual([]);
    });

    it('asks for the password again (a wrong one is refused and counted), then returns to the form and the action works', async () => {
      await ageSudo();
      const page = await admin.get('/account/sudo?return_to=/account/security').expect(200);
      expect(page.text).toContain('data-testid="sudo-page"');
      expect(page.text).toContain('name="return_to" value="/account/security"');
      const csrf = csrfFrom(page.text);
      const wrong = await postForm(admin, csrf, '/account/sudo', { password: 'not-the-password', return_to: '/account/security' }).expect(
        401,
      );
      expect(wrong.text).toContain('data-testid="sudo-error"');
      const failed = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.sign_in_failed' ORDER BY id DESC LIMIT 1`);
      expect(failed[0].details).toEqual({ username: 'admin', reason: 'sudo' });
      await postForm(admin, csrf, '/account/security/passkeys/options').expect(303);
      await postForm(admin, csrf, '/account/sudo', { password: ADMIN.password, return_to: '/account/security' })
        .expect(303)
        .expect('Location', '/account/security');
      const mine = new SoftAuthenticator(ORIGIN);
      const added = await addPasskey(admin, csrf, mine);
      expect([added.status, added.headers.location]).toEqual([303, '/account/security']);
      expect(await passkeysOf('admin')).toBe(1);
      // The member removes their own passkey (under sudo too): a stale proof is asked again first.
      const [{ id }] = await t.sql(`SELECT id FROM staff_passkeys`);
      await ageSudo();
      await postForm(admin, csrf, `/account/security/passkeys/${id}/remove`)
        .expect(303)
        .expect('Location', /^\/account\/sudo/);
      expect(await passkeysOf('admin')).toBe(1);
      // An account with a passkey proves itself with it (the password alone is no longer enough).
      const passwordOnly = await postForm(admin, csrf, '/account/sudo', { password: ADMIN.password, return_to: '/account/security' });
      expect(passwordOnly.status).toBe(401);
      const options = await postForm(admin, csrf, '/account/sudo/passkey/options').expect(200);
      await postForm(admin, csrf, '/account/sudo/passkey', {
        response: JSON.stringify(mine.authenticate(options.body)),
        return_to: '/account/security',
      })
        .expect(303)
        .expect('Location', '/account/security');
      await postForm(admin, csrf, `/account/security/passkeys/${id}/remove`).expect(303).expect('Location', '/account/security');
      expect(await passkeysOf('admin')).toBe(0);
      const removed = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.second_factor_reset' ORDER BY id DESC LIMIT 1`);
      expect(removed[0].details).toEqual({ username: 'admin', factor: 'passkey', own: true });
    });

    it('never returns to another site after confirming', async () => {
      await ageSudo();
      const csrf = csrfFrom((await admin.get('/account/sudo?return_to=//evil.example/x').expect(200)).text);
      for (const returnTo of ['//evil.example/x', 'https://evil.example', '/\\evil.example'])
        await postForm(admin, csrf, '/account/sudo', { password: ADMIN.password, return_to: returnTo })
          .expect(303)
          .expect('Location', '/dashboard');
    });
  });

  describe('owners', () => {
    it('refuses (409) to demote, disable or limit to some products the last enabled owner of every product', async () => {
      const csrf = await token('/staff');
      const id = await adminId();
      await postForm(admin, csrf, `/staff/${id}/access`, { role: 'owner', products: 'POS_RETAIL' }).expect(409);
      await postForm(admin, csrf, `/staff/${id}/access`, { role: 'admin' }).expect(409);
      await postForm(admin, csrf, `/staff/${id}/disable`).expect(409);
      expect(await t.sql(`SELECT role, product_ids, disabled FROM users WHERE id = $1`, [id])).toEqual([
        { role: 'owner', product_ids: null, disabled: false },
      ]);
    });
  });

  describe('invitations', () => {
    it('inviting the same username or e-mail again replaces the earlier link, and the list offers revoke and resend', async () => {
      const csrf = await token('/staff');
      const first = await invite(admin, csrf, { username: 'bob', email: 'bob@example.test', role: 'support' });
      expect(first.res.status).toBe(201);
      const second = await invite(admin, csrf, { username: 'bobby', email: 'BOB@example.test', role: 'viewer' });
      expect(second.res.status).toBe(201);
      await newAgent().get(first.path!).expect(404);
      const pending = await t.sql(`SELECT id, username FROM staff_invites WHERE accepted_at IS NULL AND username IN ('bob', 'bobby')`);
      expect(pending).toEqual([{ id: expect.any(Number), username: 'bobby' }]);
      const list = (await admin.get('/staff').expect(200)).text;
      expect(list).toContain(`action="/staff/invites/${pending[0].id}/revoke"`);
      expect(list).toContain(`action="/staff/invites/${pending[0].id}/resend"`);
      const replaced = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.invitation_revoked' ORDER BY id DESC LIMIT 1`);
      expect(replaced[0].details).toMatchObject({ username: 'bob', replaced: true });

      // Resend: a new link, the old one dies.
      const resent = await postForm(admin, csrf, `/staff/invites/${pending[0].id}/resend`).expect(200);
      const newPath = unescape(/id="invite-url"[^>]*value="([^"]+)"/.exec(resent.text)![1]).slice(ORIGIN.length);
      expect(newPath).not.toBe(second.path);
      await newAgent().get(second.path!).expect(404);
      await newAgent().get(newPath).expect(200);

      // Revoke: the link dies, audited.
      await postForm(admin, csrf, `/staff/invites/${pending[0].id}/revoke`).expect(303).expect('Location', '/staff');
      await newAgent().get(newPath).expect(404);
      const revoked = await t.sql(
        `SELECT actor, details FROM audit_entries WHERE action = 'staff.invitation_revoked' ORDER BY id DESC LIMIT 1`,
      );
      expect(revoked[0]).toEqual({ actor: 'staff:admin', details: { username: 'bobby', email: 'BOB@example.test' } });
      await postForm(admin, csrf, `/staff/invites/${pending[0].id}/revoke`).expect(404);
    });

    it('accepting signs the new member in, and a link dies when its inviter is disabled or demoted below the role it grants', async () => {
      const csrf = await token('/staff');
      const carolInvite = await invite(admin, csrf, { username: 'carol', email: 'carol@example.test', role: 'owner' });
      expect(carolInvite.res.status).toBe(201);
      const { agent: carol, res } = await accept(carolInvite.path!);
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/dashboard');
      expect((await carol.get('/dashboard').expect(200)).text).toContain('data-testid="current-user">carol<');

      const carolCsrf = csrfFrom((await carol.get('/staff').expect(200)).text);
      const dave = await invite(carol, carolCsrf, { username: 'dave', email: 'dave@example.test', role: 'owner' });
      const erin = await invite(carol, carolCsrf, { username: 'erin', email: 'erin@example.test', role: 'admin' });
      await newAgent().get(dave.path!).expect(200);
      const [{ id: carolId }] = await t.sql(`SELECT id FROM users WHERE username = 'carol'`);
      // Carol is demoted to admin: her owner invitation dies, her admin one lives.
      await postForm(admin, csrf, `/staff/${carolId}/access`, { role: 'admin' }).expect(303);
      await newAgent().get(dave.path!).expect(404);
      await newAgent().get(erin.path!).expect(200);
      // Carol is disabled: every link of hers dies, and it is not in the pending list.
      await postForm(admin, csrf, `/staff/${carolId}/disable`).expect(303);
      await newAgent().get(erin.path!).expect(404);
      // Nor can it be used with a form token taken from a live link's page.
      const frank = await invite(admin, csrf, { username: 'frank', email: 'frank@example.test', role: 'viewer' });
      const visitor = newAgent();
      const formToken = csrfFrom((await visitor.get(frank.path!).expect(200)).text);
      const password = 'a-new-password-1';
      await visitor.post(erin.path!).type('form').send({ password, password_repeat: password, _csrf: formToken }).expect(404);
      expect(await t.sql(`SELECT id FROM users WHERE username = 'erin'`)).toEqual([]);
      expect((await admin.get('/staff').expect(200)).text).not.toContain('erin@example.test');
    });
  });

  describe('nothing stored for an anonymous visitor', () => {
    it('POST /login/passkey/options stores no session row: the challenge travels in a sealed cookie', async () => {
      const visitor = newAgent();
      const before = await sessions();
      const login = await visitor.get('/login').expect(200);
      const res = await visitor
        .post('/login/passkey/options')
        .type('form')
        .send({ _csrf: csrfFrom(login.text) })
        .expect(200);
      expect(res.body.challenge).toEqual(expect.any(String));
      expect(await sessions()).toBe(before);
      const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
      expect(cookies.some((c) => c.startsWith('licence_passkey='))).toBe(true);
      expect(cookies.some((c) => c.startsWith('licence_session='))).toBe(false);
      // A forged or replayed cookie opens nothing.
      const forged = await newAgent()
        .post('/login/passkey')
        .set('Cookie', 'licence_passkey=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
        .type('form')
        .send({ response: '{}', _csrf: csrfFrom(login.text) });
      expect(forged.status).toBe(403);
      expect(await sessions()).toBe(before);
    });
  });

  describe('the Staff page', () => {
    it('shows who has a second factor, sends Disable and Reset through a confirmation page, and reports every invite error at once', async () => {
      const page = (await admin.get('/staff').expect(200)).text;
      expect(page).toContain('<th scope="col">Second factor</th>');
      expect(page).toContain('data-testid="second-factors"');
      expect(page).not.toMatch(/<form method="post" action="\/staff\/\d+\/disable"/);
      const [{ id: carolId }] = await t.sql(`SELECT id FROM users WHERE username = 'carol'`);
      await postForm(admin, await token('/staff'), `/staff/${carolId}/enable`).expect(303);
      expect((await admin.get('/staff').expect(200)).text).toContain(`href="/staff/${carolId}/confirm/disable"`);
      const confirm = (await admin.get(`/staff/${carolId}/confirm/disable`).expect(200)).text;
      expect(confirm).toContain(`action="/staff/${carolId}/disable"`);
      await admin.get(`/staff/${carolId}/confirm/reset-second-factors`).expect(200);
      await admin.get(`/staff/${carolId}/confirm/delete-everything`).expect(404);

      const res = await postForm(admin, await token('/staff'), '/staff/invites', { username: 'bad name!', email: 'nope', role: 'emperor' });
      expect(res.status).toBe(400);
      const summary = /data-error-summary[\s\S]*?<\/ul>/.exec(res.text)?.[0] ?? '';
      expect(summary).toContain('The username must be');
      expect(summary).toContain('Give a valid e-mail address');
      expect(summary).toContain('Choose owner, admin, support or viewer');
    });
  });

  describe("signing in and one's own second factors", () => {
    async function signIn(username: string, password: string) {
      const agent = newAgent();
      const page = await agent.get('/login').expect(200);
      return agent
        .post('/login')
        .type('form')
        .send({ username, password, _csrf: csrfFrom(page.text) });
    }

    it('tells a disabled member why, but only after the right password', async () => {
      const csrf = await token('/staff');
      const gina = await invite(admin, csrf, { username: 'gina', email: 'gina@example.test', role: 'viewer' });
      await accept(gina.path!, 'ginas-password-1');
      const [{ id }] = await t.sql(`SELECT id FROM users WHERE username = 'gina'`);
      await postForm(admin, csrf, `/staff/${id}/disable`).expect(303);
      const right = await signIn('gina', 'ginas-password-1');
      expect(right.status).toBe(401);
      expect(right.text).toContain('This account is disabled. Ask an owner');
      const wrong = await signIn('gina', 'not-her-password');
      expect(wrong.status).toBe(401);
      expect(wrong.text).toContain('Invalid username or password.');
      expect(wrong.text).not.toContain('disabled');
    });

    it("the audit log's staff filter matches any letter case, suggests usernames, and treats _ literally", async () => {
      const page = (await admin.get('/audit?staff=ADMIN').expect(200)).text;
      expect(page).toContain('data-testid="staff-suggestions"');
      expect(page).toContain('<option value="carol">');
      const upper = [...page.matchAll(/data-testid="audit-row"/g)].length;
      const exact = [...(await admin.get('/audit?staff=admin').expect(200)).text.matchAll(/data-testid="audit-row"/g)].length;
      expect(upper).toBeGreaterThan(0);
      expect(upper).toBe(exact);
      expect((await admin.get('/audit?staff=a_min').expect(200)).text).not.toContain('data-testid="audit-row"');
    });

    it('regenerates recovery codes (copy and download offered, the old ones dead) and removes its own authenticator app', async () => {
      const csrf = await securityToken();
      await postForm(admin, csrf, '/account/security/totp').expect(303).expect('Location', '/account/security');
      const uri = /data-testid="totp-uri">([^<]+)</
        .exec((await admin.get('/account/security').expect(200)).text)![1]
        .replace(/&amp;/g, '&')
        .replace(/&#x3D;/g, '=');
      const secret = new URL(uri).searchParams.get('secret')!;
      const code = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
      await postForm(admin, csrf, '/account/security/totp/confirm', { code }).expect(200);
      const before = await t.sql(`SELECT code_hash FROM staff_recovery_codes ORDER BY id`);
      const fresh = await postForm(admin, csrf, '/account/security/recovery-codes').expect(200);
      const codes = [...fresh.text.matchAll(/<li>([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})<\/li>/g)].map((m) => m[1]);
      expect(codes).toHaveLength(10);
      expect(fresh.text).toContain('data-testid="recovery-codes-copy"');
      expect(unescape(fresh.text)).toMatch(/href="data:text\/plain;charset=utf-8,[^"]+" download="recovery-codes.txt"/);
      const after = await t.sql(`SELECT code_hash FROM staff_recovery_codes ORDER BY id`);
      expect(after).toHaveLength(10);
      expect(after.some((r) => before.some((b) => b.code_hash === r.code_hash))).toBe(false);
      // Under sudo like every change of second factors.
      await ageSudo();
      await postForm(admin, csrf, '/account/security/recovery-codes')
        .expect(303)
        .expect('Location', /^\/account\/sudo/);
      await postForm(admin, csrf, '/account/security/totp/remove')
        .expect(303)
        .expect('Location', /^\/account\/sudo/);
      expect(await t.sql(`SELECT user_id FROM staff_totp_secrets`)).toHaveLength(1);
      // The password alone no longer proves it: a recovery code with it does.
      await postForm(admin, csrf, '/account/sudo', { password: ADMIN.password, return_to: '/account/security' }).expect(401);
      await postForm(admin, csrf, '/account/sudo', { password: ADMIN.password, code: codes[0], return_to: '/account/security' })
        .expect(303)
        .expect('Location', '/account/security');
      await postForm(admin, csrf, '/account/security/totp/remove').expect(303).expect('Location', '/account/security');
      expect(await t.sql(`SELECT user_id FROM staff_totp_secrets`)).toEqual([]);
      expect(await t.sql(`SELECT id FROM staff_recovery_codes`)).toEqual([]);
    });
  });
});
