import type { Browser, Page } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import type { TestApp } from '../support/test-app';
import { startOpenIdProvider, TestOpenIdProvider } from '../support/oidc-provider';
import { ADMIN } from '../dashboard-helpers';
import { BOTH_WIDTHS, collectConsoleErrors, DESKTOP, PHONE, screenshot, seriousViolations, startDashboard } from './browser';

const PUBLIC_URL = 'https://licences.example.test';
const CLIENT = { clientId: 'licence-dashboard', clientSecret: 'browser-client-secret-0123456789' };

/** The code an authenticator app shows, computed from the otpauth:// URI on the page (RFC 6238: SHA-1, 6 digits, 30 s). */
const codeFor = (uri: string, at = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(new URL(uri).searchParams.get('secret')!), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: at,
  });

/** Second factors and single sign-on in Chromium at 1280 and 390 px (docs/dashboard.md, Second factors; Single sign-on). */
describe('second factors and single sign-on in Chromium', () => {
  let provider: TestOpenIdProvider;
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let uri: string;
  let recoveryCodes: string[];

  beforeAll(async () => {
    provider = await startOpenIdProvider({
      ...CLIENT,
      redirectUris: [`${PUBLIC_URL}/login/sso/callback`],
      accounts: { 'sub-dana': { preferred_username: 'dana', roles: ['support'] } },
    });
    ({ t, browser, baseUrl } = await startDashboard({
      publicUrl: PUBLIC_URL,
      staff: {
        requireSecondFactor: false,
        signInLimit: 10,
        signInDelayMs: 1_000,
        oidc: { issuer: provider.issuer, ...CLIENT, roleClaim: 'roles' },
      },
    }));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await provider?.stop();
  });

  async function newPage(viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    // The provider sends the browser back to PUBLIC_URL: this test's server answers for it.
    await page.route(`${PUBLIC_URL}/**`, (route) =>
      route.fulfill({ status: 302, headers: { location: `${baseUrl}${route.request().url().slice(PUBLIC_URL.length)}` } }),
    );
    return { page, errors: collectConsoleErrors(page) };
  }

  async function passwordStep(page: Page) {
    await page.goto(`${baseUrl}/login`);
    await page.fill('input[name=username]', ADMIN.username);
    await page.fill('input[name=password]', ADMIN.password);
    await page.click('button[type=submit]');
  }

  it('enrols an authenticator app: QR code and link, a code computed here, ten recovery codes (both widths, axe clean)', async () => {
    const { page, errors } = await newPage(DESKTOP);
    await passwordStep(page);
    await page.waitForURL(`${baseUrl}/dashboard`);
    await page.click('nav a[href="/account/security"]');
    expect(await seriousViolations(page)).toEqual([]);
    await page.click('[data-testid=totp-start]');
    await page.waitForSelector('[data-testid=totp-qr]');
    // The QR code is an image of our own origin that loaded (the CSP allows no other).
    expect(await page.$eval('[data-testid=totp-qr]', (img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(
      100,
    );
    uri = (await page.textContent('[data-testid=totp-uri]'))!.trim();
    expect(uri).toMatch(/^otpauth:\/\/totp\//);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'security-enrol-desktop', { viewport: true });
    await page.setViewportSize(PHONE);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'security-enrol-phone', { viewport: true });
    await page.setViewportSize(DESKTOP);
    await page.fill('#totp-code', '000000' === codeFor(uri) ? '111111' : '000000');
    await page.click('form[action="/account/security/totp/confirm"] button');
    expect(await page.textContent('#totp-code-error')).toContain('does not match');
    expect(await seriousViolations(page)).toEqual([]);
    await page.fill('#totp-code', codeFor(uri));
    await page.click('form[action="/account/security/totp/confirm"] button');
    recoveryCodes = await page.$$eval('[data-testid=recovery-codes] li', (items) => items.map((li) => li.textContent ?? ''));
    expect(recoveryCodes).toHaveLength(10);
    for (const [, viewport] of BOTH_WIDTHS) {
      await page.setViewportSize(viewport);
      expect(await seriousViolations(page)).toEqual([]);
    }
    expect(errors).toEqual([]);
  });

  it.each(BOTH_WIDTHS)(
    'signs in with a second factor at %s width: a wrong code refused, then the right one (axe clean)',
    async (name, viewport) => {
      const { page, errors } = await newPage(viewport);
      await passwordStep(page);
      await page.waitForURL(`${baseUrl}/login/verify`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.fill('input[name=code]', '12345x');
      await page.click('button[type=submit]');
      expect(await page.textContent('[role=alert]')).toContain('not valid');
      expect(await seriousViolations(page)).toEqual([]);
      // Desktop: the app's next code (a step the enrolment did not use); phone: a recovery code.
      const code = name === 'desktop' ? codeFor(uri, Date.now() + 30_000) : recoveryCodes[0];
      await page.fill('input[name=code]', code);
      await page.click('button[type=submit]');
      await page.waitForURL(`${baseUrl}/dashboard`);
      expect(await page.textContent('[data-testid=current-user]')).toBe('admin');
      expect(errors.filter((e) => !e.startsWith('401 '))).toEqual([]);
    },
  );

  it('refuses a recovery code the second time', async () => {
    const { page } = await newPage(PHONE);
    await passwordStep(page);
    await page.waitForURL(`${baseUrl}/login/verify`);
    await page.fill('input[name=code]', recoveryCodes[0]);
    await page.click('button[type=submit]');
    expect(await page.textContent('[role=alert]')).toContain('not valid');
    expect(page.url()).toBe(`${baseUrl}/login/verify`);
  });

  it.each(BOTH_WIDTHS)('signs in with single sign-on at %s width (login page axe clean)', async (_name, viewport) => {
    const { page, errors } = await newPage(viewport);
    await page.goto(`${baseUrl}/login`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.click('[data-testid=sso-start]');
    await page.waitForURL(`${baseUrl}/dashboard`);
    expect(await page.textContent('[data-testid=current-user]')).toBe('dana');
    expect(errors).toEqual([]);
  });
});
