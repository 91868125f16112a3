import type { Browser, CDPSession, Page } from 'playwright-core';
import { findFreePort } from '../../src/database/processes';
import { PasskeysService } from '../../src/staff/second-factors/passkeys.service';
import type { TestApp } from '../support/test-app';
import { ADMIN } from '../dashboard-helpers';
import { collectConsoleErrors, DESKTOP, PHONE, seriousViolations, startDashboard } from './browser';

/**
 * Passkeys in Chromium with its virtual authenticator (DevTools protocol WebAuthn domain; docs/dashboard.md, Passkeys):
 * registered on the security page, used as the second step after the password and to sign in without one. WebAuthn
 * refuses IP addresses as relying party, so the dashboard is reached as http://localhost (PUBLIC_URL's host).
 */
describe('passkeys in Chromium (virtual authenticator)', () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  let page: Page;
  let cdp: CDPSession;
  let errors: string[];

  beforeAll(async () => {
    const port = await findFreePort();
    origin = `http://localhost:${port}`;
    ({ t, browser } = await startDashboard({ publicUrl: origin }, port));
    const context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    errors = collectConsoleErrors(page);
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const logOut = async () => {
    await page.click('form[action="/logout"] button');
    await page.waitForURL(`${origin}/login`);
  };

  it('registers a passkey on the security page (axe clean), with its audit entry', async () => {
    await page.goto(`${origin}/login`);
    await page.fill('input[name=username]', ADMIN.username);
    await page.fill('input[name=password]', ADMIN.password);
    await page.click('form[action="/login"] button[type=submit]');
    await page.waitForURL(`${origin}/dashboard`);
    await page.goto(`${origin}/account/security`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.click('[data-testid=passkey-register]');
    await page.waitForSelector('[data-testid=passkey-enabled]');
    expect(await page.textContent('[role=status].flash')).toContain('Passkey added');
    const [row] = await t.sql(`SELECT credential_id, length(public_key) AS key_bytes, transports FROM staff_passkeys`);
    expect(row.credential_id).toMatch(/^[\w-]+$/);
    // A COSE public key: 42 bytes or more (an Ed25519 key is the shortest).
    expect(row.key_bytes).toBeGreaterThanOrEqual(42);
    const [event] = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.second_factor_added'`);
    expect(event.details).toEqual({ username: 'admin', factor: 'passkey' });
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('uses the passkey as the second step after the password', async () => {
    await logOut();
    await page.fill('input[name=username]', ADMIN.username);
    await page.fill('input[name=password]', ADMIN.password);
    await page.click('form[action="/login"] button[type=submit]');
    await page.waitForURL(`${origin}/login/verify`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.click('[data-testid=passkey-second-factor]');
    await page.waitForURL(`${origin}/dashboard`);
    const [event] = await t.sql(`SELECT details FROM audit_entries WHERE action = 'staff.signed_in' ORDER BY id DESC LIMIT 1`);
    expect(event.details).toEqual({ username: 'admin', method: 'password+passkey' });
  });

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const)('signs in without a password at %s width', async (_name, viewport) => {
    await logOut();
    await page.setViewportSize(viewport);
    expect(await seriousViolations(page)).toEqual([]);
    await page.click('[data-testid=passkey-sign-in]');
    await page.waitForURL(`${origin}/dashboard`);
    expect(await page.textContent('[data-testid=current-user]')).toBe('admin');
    await page.setViewportSize(DESKTOP);
  });

  it('refuses the passkey of another account, and an answer replayed', async () => {
    await logOut();
    // Catch the browser's signed answer instead of sending it.
    let posted = '';
    await page.route(`${origin}/login/passkey`, async (route) => {
      posted = route.request().postData() ?? '';
      await route.abort();
    });
    await page.click('[data-testid=passkey-sign-in]');
    for (let i = 0; i < 50 && !posted; i++) await new Promise((r) => setTimeout(r, 100));
    await page.unroute(`${origin}/login/passkey`);
    const answer = JSON.parse(new URLSearchParams(posted).get('response')!) as { response: { clientDataJSON: string } };
    const { challenge } = JSON.parse(Buffer.from(answer.response.clientDataJSON, 'base64url').toString()) as { challenge: string };
    const passkeys = t.app.get(PasskeysService);
    const [{ id: adminId }] = await t.sql<{ id: number }>(`SELECT id FROM users WHERE username = 'admin'`);
    const [{ id: otherId }] = await t.sql<{ id: number }>(
      `INSERT INTO users (username, password_hash, role) VALUES ('other', 'x', 'viewer') RETURNING id`,
    );
    // As the second step of the other account's sign-in: refused, and nothing recorded as used.
    expect(await passkeys.authenticate(answer, challenge, otherId)).toBeNull();
    expect(await passkeys.authenticate(answer, challenge, adminId)).toBe(adminId);
    // The same signed answer again: its signature counter did not move forward.
    expect(await passkeys.authenticate(answer, challenge, adminId)).toBeNull();
    expect(await passkeys.authenticate(answer, 'another-challenge', adminId)).toBeNull();
    expect(errors.filter((e) => !/ERR_FAILED|net::|\/login\/passkey/.test(e))).toEqual([]);
  });
});
