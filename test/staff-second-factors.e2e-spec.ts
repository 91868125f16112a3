import request from 'supertest';
import type { Server } from 'node:http';
import { Secret, TOTP } from 'otpauth';
import { SecondFactorsService } from '../src/staff/second-factors/second-factors.service';
import { StaffService } from '../src/staff/staff.service';
import { createTestApp, TestApp } from './support/test-app';
import { ADMIN, csrfFrom, loggedInAgent, type Agent } from './dashboard-helpers';

/** The code an authenticator app shows, computed here from the otpauth:// URI the page gave (RFC 6238: SHA-1, 6 digits, 30 s). */
function codeFor(uri: string, at = Date.now()): string {
  const secret = new URL(uri).searchParams.get('secret')!;
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at });
}

const uriOn = (html: string) =>
  /data-testid="totp-uri">([^<]+)</
    .exec(html)?.[1]
    .replace(/&amp;/g, '&')
    .replace(/&#x3D;/g, '=');

/** Password step only: the page it sends to. */
async function passwordStep(t: TestApp, credentials = ADMIN): Promise<{ agent: Agent; location: string }> {
  const agent = request.agent(t.app.getHttpServer() as Server);
  const page = await agent.get('/login').expect(200);
  const res = await agent
    .post('/login')
    .type('form')
    .send({ ...credentials, _csrf: csrfFrom(page.text) })
    .expect(303);
  return { agent, location: res.headers.location };
}

async function secondStep(agent: Agent, code: string) {
  const page = await agent.get('/login/verify').expect(200);
  return agent
    .post('/login/verify')
    .type('form')
    .send({ code, _csrf: csrfFrom(page.text) });
}

/** Enrols TOTP for the signed-in agent; the URI and the recovery codes. */
async function enrolTotp(agent: Agent, token: () => Promise<string>) {
  await agent
    .post('/account/security/totp')
    .type('form')
    .send({ _csrf: await token() })
    .expect(303);
  const page = await agent.get('/account/security').expect(200);
  const uri = uriOn(page.text)!;
  const done = await agent
    .post('/account/security/totp/confirm')
    .type('form')
    .send({ code: codeFor(uri), _csrf: csrfFrom(page.text) })
    .expect(200);
  const codes = [...done.text.matchAll(/<li>([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})<\/li>/g)].map((m) => m[1]);
  return { uri, codes };
}

describe('staff second factors: TOTP, recovery codes, STAFF_REQUIRE_2FA, per-account delay', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ staff: { requireSecondFactor: false, signInLimit: 3, signInDelayMs: 1_200 } });
  }, 60_000);
  afterAll(() => t.close());

  let uri: string;
  let codes: string[];

  it('enrols TOTP: QR code from our origin, otpauth:// URI, a wrong first code refused, then 10 recovery codes shown once', async () => {
    const { agent, token } = await loggedInAgent(t);
    await agent
      .post('/account/security/totp')
      .type('form')
      .send({ _csrf: await token() })
      .expect(303);
    const page = await agent.get('/account/security').expect(200);
    expect(page.text).toContain('src="/account/security/totp.png"');
    const qr = await agent.get('/account/security/totp.png').expect(200).expect('Content-Type', 'image/png');
    expect(qr.body.subarray(1, 4).toString()).toBe('PNG');
    uri = uriOn(page.text)!;
    expect(uri).toMatch(/^otpauth:\/\/totp\/Licence%20server:admin\?.*secret=[A-Z2-7]{32}/);
    expect(new URL(uri).searchParams.get('algorithm')).toBe('SHA1');
    expect(new URL(uri).searchParams.get('digits')).toBe('6');
    expect(new URL(uri).searchParams.get('period')).toBe('30');
    const wrong = String((Number(codeFor(uri)) + 1) % 1_000_000).padStart(6, '0');
    await agent
      .post('/account/security/totp/confirm')
      .type('form')
      .send({ code: wrong, _csrf: csrfFrom(page.text) })
      .expect(422);
    const done = await agent
      .post('/account/security/totp/confirm')
      .type('form')
      .send({ code: codeFor(uri), _csrf: csrfFrom(page.text) })
      .expect(200);
    codes = [...done.text.matchAll(/<li>([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})<\/li>/g)].map((m) => m[1]);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    // At rest: the secret sealed (its base32 nowhere in the row), the codes only as SHA-256 hashes.
    const secret = new URL(uri).searchParams.get('secret')!;
    const [row] = await t.sql<{ secret_envelope: string }>('SELECT secret_envelope FROM staff_totp_secrets');
    expect(row.secret_envelope).toMatch(/^v1\./);
    expect(row.secret_envelope).not.toContain(secret);
    const hashes = await t.sql<{ code_hash: string }>('SELECT code_hash FROM staff_recovery_codes');
    expect(hashes).toHaveLength(10);
    for (const { code_hash } of hashes) expect(code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashes.map((h) => h.code_hash).join()).not.toContain(codes[0].replace(/-/g, ''));
    const [event] = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.second_factor_added'`);
    expect(event.details).toEqual({ username: 'admin', factor: 'totp' });
  });

  it('asks for the second factor after the password: no session until then, and a wrong or replayed code is refused', async () => {
    const { agent, location } = await passwordStep(t);
    expect(location).toBe('/login/verify');
    await agent.get('/dashboard').expect(302).expect('Location', '/login');
    const wrong = String((Number(codeFor(uri)) + 7) % 1_000_000).padStart(6, '0');
    expect((await secondStep(agent, wrong)).status).toBe(401);
    // The code that confirmed the enrolment was used: the same 30-second step never works again.
    expect((await secondStep(agent, codeFor(uri))).status).toBe(401);
    const failures = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.sign_in_failed' ORDER BY id`);
    expect(failures.slice(-2).map((f) => f.details)).toEqual([
      { username: 'admin', reason: 'second_factor' },
      { username: 'admin', reason: 'second_factor' },
    ]);
  });

  it('signs in with the next code (one step later), and that code cannot be used a second time', async () => {
    const next = codeFor(uri, Date.now() + 30_000);
    const first = await passwordStep(t);
    const ok = await secondStep(first.agent, next);
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/dashboard');
    await first.agent.get('/dashboard').expect(200);
    const [signedIn] = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.signed_in' ORDER BY id DESC LIMIT 1`);
    expect(signedIn.details).toEqual({ username: 'admin', method: 'password+totp' });
    const again = await passwordStep(t);
    expect((await secondStep(again.agent, next)).status).toBe(401);
  });

  it('accepts a recovery code once (typed in lower case, without dashes) and refuses its second use', async () => {
    const first = await passwordStep(t);
    expect((await secondStep(first.agent, codes[3].replace(/-/g, '').toLowerCase())).status).toBe(303);
    await first.agent.get('/licenses').expect(200);
    const second = await passwordStep(t);
    expect((await secondStep(second.agent, codes[3])).status).toBe(401);
    await second.agent.get('/licenses').expect(302).expect('Location', '/login');
    const [{ n }] = await t.sql(`SELECT count(*)::int AS n FROM staff_recovery_codes WHERE used_at IS NULL`);
    expect(n).toBe(9);
  });

  it('refuses the second step without a password first (a forged or absent pending sign-in)', async () => {
    const agent = request.agent(t.app.getHttpServer() as Server);
    await agent.get('/login/verify').expect(302).expect('Location', '/login');
    const page = await agent.get('/login').expect(200);
    await agent
      .post('/login/verify')
      .type('form')
      .send({ code: codeFor(uri), _csrf: csrfFrom(page.text) })
      .expect(303)
      .expect('Location', '/login');
  });

  it('delays (never locks) an account past RATE_LIMIT_STAFF_SIGN_IN failures: the right password still works after the wait', async () => {
    await t.sql(`DELETE FROM staff_sign_in_failures`);
    const wrong = { username: 'Admin', password: 'not-the-password' };
    for (let i = 0; i < 3; i++) expect((await passwordStep(t, wrong).catch(() => null)) === null).toBe(true);
    const [{ failures }] = await t.sql(`SELECT failures FROM staff_sign_in_failures`);
    expect(failures).toBe(3);
    const started = Date.now();
    const { location } = await passwordStep(t);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_200);
    expect(location).toBe('/login/verify');
  });

  it('resets every second factor through the service the Staff page calls (StaffService), with its audit entry', async () => {
    const factors = t.app.get(SecondFactorsService);
    const [{ id }] = await t.sql<{ id: number }>(`SELECT id FROM users WHERE username = 'admin'`);
    expect(await factors.factorsOf(id)).toEqual(['totp']);
    await t.app.get(StaffService).resetSecondFactors(id, { type: 'dashboard', name: 'staff:admin', ip: '127.0.0.1' });
    expect(await factors.factorsOf(id)).toEqual([]);
    expect(await t.sql(`SELECT count(*)::int AS n FROM staff_recovery_codes`)).toEqual([{ n: 0 }]);
    const { location } = await passwordStep(t);
    expect(location).toBe('/dashboard');
    const [event] = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.second_factor_reset'`);
    expect(event.details).toEqual({ username: 'admin' });
  });
});

describe('STAFF_REQUIRE_2FA=true', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ staff: { requireSecondFactor: true, signInLimit: 10, signInDelayMs: 1_000 } });
  }, 60_000);
  afterAll(() => t.close());

  it('sends a password account without a factor to enrol, keeps every other page closed until it has one', async () => {
    const { agent, location } = await passwordStep(t);
    expect(location).toBe('/account/security');
    await agent.get('/licenses').expect(302).expect('Location', '/account/security');
    const page = await agent.get('/account/security').expect(200);
    expect(page.text).toContain('data-testid="enrolment-required"');
    await agent
      .post('/licenses')
      .type('form')
      .send({ _csrf: csrfFrom(page.text) })
      .expect(303)
      .expect('Location', '/account/security');
    const { codes } = await enrolTotp(agent, async () => csrfFrom((await agent.get('/account/security')).text));
    expect(codes).toHaveLength(10);
    await agent.get('/licenses').expect(200);
  });

  it('an account with a factor goes through the second step, not the enrolment', async () => {
    const { location } = await passwordStep(t);
    expect(location).toBe('/login/verify');
  });
});

describe('an account without a password (single sign-on)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);
  afterAll(() => t.close());

  it('cannot sign in with a password, not even the text the server hashes for unknown names', async () => {
    await t.sql(`INSERT INTO users (username, password_hash, role) VALUES ('sso-person', NULL, 'owner')`);
    for (const password of ['no such user: equalises login timing', '', 'anything-at-all']) {
      const agent = request.agent(t.app.getHttpServer() as Server);
      const page = await agent.get('/login').expect(200);
      const res = await agent
        .post('/login')
        .type('form')
        .send({ username: 'sso-person', password, _csrf: csrfFrom(page.text) });
      expect(res.status).toBe(401);
    }
  });
});
