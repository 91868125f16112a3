import type { Browser, Page } from 'playwright-core';
import { UsersService } from '../../src/staff/users.service';
import type { StaffRole } from '../../src/staff/roles';
import { ADMIN } from '../dashboard-helpers';
import { createLicense } from '../support/factories';
import type { TestApp } from '../support/test-app';
import { BOTH_WIDTHS, collectConsoleErrors, screenshot, seriousViolations, startDashboard } from './browser';

const PASSWORD = 'staff-password-123';

/** docs/dashboard.md, Staff and roles: invitations and role limits in Chromium at 1280 and 390 px. */
describe('staff roles in Chromium (invite, accept, what each role sees and is refused)', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let licenceId: number;

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    licenceId = (await createLicense(t, { customer_name: 'Pekara Žito', customer_email: 'zito@example.rs' })).id;
    const users = t.app.get(UsersService);
    for (const role of ['admin', 'support', 'viewer'] as StaffRole[]) await users.setPassword(`${role}-ana`, PASSWORD, role);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A fresh browser context (own cookies) at `size`, signed in as `username`. */
  const signedIn = async (username: string, password: string, size: { width: number; height: number }) => {
    const context = await browser.newContext({ viewport: size, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
    const page = await context.newPage();
    const consoleErrors = collectConsoleErrors(page);
    await page.goto(`${baseUrl}/login`);
    await page.fill('input[name=username]', username);
    await page.fill('input[name=password]', password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${baseUrl}/dashboard`);
    return { context, page, consoleErrors };
  };

  /**
   * Serious axe findings, sideways scroll and controls under 24x24 px in the page's main part (docs/dashboard.md, Tables);
   * a checkbox or radio counts with its label, which takes the click too.
   */
  const problems = async (page: Page, label: string, width: number): Promise<string[]> => {
    const found = (await seriousViolations(page)).map((v) => `${label}: ${v}`);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    if (overflow > 0) found.push(`${label}: scrolls ${overflow}px sideways at ${width}px`);
    const small = await page.evaluate<
      string[]
    >(`[...document.querySelectorAll('main button, main a.button, main select, main input:not([type=hidden]):not([type=checkbox]):not([type=radio]), main label.option, main table a')]
      .filter((el) => el.getClientRects().length > 0)
      .map((el) => [el, el.getBoundingClientRect()])
      .filter(([, r]) => r.height < 24 || r.width < 24)
      .map(([el, r]) => el.tagName.toLowerCase() + (el.name ? '[' + el.name + ']' : '') + ' ' + Math.round(r.width) + 'x' + Math.round(r.height))`);
    return [...found, ...small.map((s) => `${label}: target under 24px at ${width}px: ${s}`)];
  };

  /** A POST as the page's own session would send it (its CSRF token from the logout form), answered with its status. */
  const postAsPage = async (page: Page, path: string, form: Record<string, string>) => {
    const csrf = await page.getAttribute('form[action="/logout"] input[name=_csrf]', 'value');
    return (await page.request.post(`${baseUrl}${path}`, { form: { ...form, _csrf: csrf ?? '' }, maxRedirects: 0 })).status();
  };

  it.each(BOTH_WIDTHS)('an owner invites from the Staff page and the invitation is accepted (%s)', async (name, size) => {
    const owner = await signedIn(ADMIN.username, ADMIN.password, size);
    const { page } = owner;
    await page.goto(`${baseUrl}/staff`);
    const found = await problems(page, `staff ${name}`, size.width);
    const username = `nina-${name}`;
    await page.fill('#field-username', username);
    await page.fill('#field-email', `${username}@example.com`);
    await page.check('input[name=role][value=support]');
    await page.check('#field-products input[value=POS_RETAIL]');
    await page.click('button:has-text("Send invitation")');
    await page.waitForSelector('[data-testid=invite-link]');
    const url = await page.inputValue('#invite-url');
    expect(url).toMatch(/\/staff\/invite\/[A-Za-z0-9_-]{43}$/);
    found.push(...(await problems(page, `invited ${name}`, size.width)));
    await screenshot(page, `staff-${name}`, { viewport: true });
    expect(await t.sql(`SELECT kind FROM mail_messages WHERE to_address = $1`, [`${username}@example.com`])).toEqual([
      { kind: 'staff_invite' },
    ]);

    const visitorContext = await browser.newContext({ viewport: size });
    const visitor = await visitorContext.newPage();
    const visitorErrors = collectConsoleErrors(visitor);
    // The link names PUBLIC_URL; the test server listens on its own port.
    await visitor.goto(`${baseUrl}${new URL(url).pathname}`);
    expect(await visitor.textContent('main')).toContain(username);
    found.push(...(await problems(visitor, `accept ${name}`, size.width)));
    await visitor.fill('#field-password', 'my-own-password-1');
    await visitor.fill('#field-password_repeat', 'my-own-password-1');
    await visitor.click('button:has-text("Create my account")');
    // Accepting signs the new member in (docs/security.md, Invitations): no second sign-in.
    await visitor.waitForURL(`${baseUrl}/dashboard`);
    expect(await visitor.textContent('[role=status].flash')).toContain(`Welcome, ${username}`);
    expect(await visitor.textContent('[data-testid=current-user]')).toBe(username);
    expect(await t.sql(`SELECT role FROM users WHERE username = $1`, [username])).toEqual([{ role: 'support' }]);

    await page.goto(`${baseUrl}/staff`);
    expect(await page.locator(`[data-testid=staff-row][data-username="${username}"]`).count()).toBe(1);
    expect(found).toEqual([]);
    expect([...owner.consoleErrors, ...visitorErrors]).toEqual([]);
    await visitorContext.close();
    await owner.context.close();
  });

  it.each(BOTH_WIDTHS)(
    'a viewer sees no revoke or change control, cannot create a licence, and a posted revoke is a 403 page (%s)',
    async (name, size) => {
      const viewer = await signedIn('viewer-ana', PASSWORD, size);
      const { page } = viewer;
      await page.goto(`${baseUrl}/licenses/${licenceId}`);
      expect(await page.locator(`a[href$="/confirm/revoke"]`).count()).toBe(0);
      expect(await page.locator(`a[href$="/edit"], [data-testid=renew]`).count()).toBe(0);
      expect(await page.locator('nav a[href="/licenses/new"]').count()).toBe(0);
      const found = await problems(page, `viewer licence ${name}`, size.width);
      expect(await postAsPage(page, `/licenses/${licenceId}/revoke`, { reason: 'not allowed' })).toBe(403);
      expect((await t.sql<{ revoked: boolean }>('SELECT revoked FROM licenses WHERE id = $1', [licenceId]))[0].revoked).toBe(false);
      const refused = await page.goto(`${baseUrl}/licenses/new`);
      expect(refused?.status()).toBe(403);
      expect(await page.textContent('main')).toContain('Your role (viewer) cannot do this');
      found.push(...(await problems(page, `403 ${name}`, size.width)));
      expect(await postAsPage(page, '/licenses', { product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Nope' })).toBe(403);
      expect(found).toEqual([]);
      await viewer.context.close();
    },
  );

  it.each(BOTH_WIDTHS)('a support account is refused revoke (403) and an admin cannot manage staff (%s)', async (name, size) => {
    const support = await signedIn('support-ana', PASSWORD, size);
    await support.page.goto(`${baseUrl}/licenses/${licenceId}`);
    expect(await support.page.locator(`a[href$="/confirm/revoke"]`).count()).toBe(0);
    expect(await support.page.locator(`a[href$="/confirm/suspend"]`).count()).toBe(1);
    expect(await postAsPage(support.page, `/licenses/${licenceId}/revoke`, { reason: 'support tried' })).toBe(403);
    expect((await t.sql<{ revoked: boolean }>('SELECT revoked FROM licenses WHERE id = $1', [licenceId]))[0].revoked).toBe(false);
    await support.context.close();

    const admin = await signedIn('admin-ana', PASSWORD, size);
    expect(await admin.page.locator('nav a[href="/staff"]').count()).toBe(0);
    const refused = await admin.page.goto(`${baseUrl}/staff`);
    expect(refused?.status()).toBe(403);
    expect(await postAsPage(admin.page, '/staff/invites', { username: 'mallory', email: 'm@example.com', role: 'owner' })).toBe(403);
    expect(await t.sql(`SELECT 1 FROM staff_invites WHERE username = 'mallory'`)).toEqual([]);
    await admin.context.close();
  });
});
