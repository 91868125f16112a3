import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { createLicense, insertSeat } from '../support/factories';
import { startSmtpServer } from '../support/smtp-server';
import type { TestApp } from '../support/test-app';
import { collectConsoleErrors, DESKTOP, expectFocusAfterLoad, PHONE, screenshot, seriousViolations, startDashboard } from './browser';

// A long unbreakable address (docs/dashboard.md, Tables): the header and the pages must still fit a 390 px screen.
const CUSTOMER = 'ana.petrovic.procurement.department.with.a.long.local.part@example-company-international.com';
const LINK = /https:\/\/licences\.example\.test(\/portal\/sign-in\?token=[A-Za-z0-9_-]+)/;

/** Presses Tab until the focused element matches `selector` (at most 30 times): proves it is reachable by keyboard. */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(selector)}) === true`)) return;
  }
  throw new Error(`${selector} not reached with Tab`);
}

// docs/portal.md: the whole customer flow in Chromium, reading the sign-in link from a real SMTP server.
describe('customer portal in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let page: Page;
  let consoleErrors: string[];
  let pos: { id: number; license_key: string };
  let erp: { id: number; license_key: string };
  let oldLaptop: { id: number };
  let stillBound: { id: number };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    ({ t, browser, baseUrl } = await startDashboard({
      mail: { smtpUrl: smtp.url, from: 'keys@vendor.example', brandName: 'Vendor Soft', disabledKinds: [], retryScheduleSeconds: [1] },
      portal: { enabled: true, loginLimit: 20, storePortalUrls: { stripe: 'https://billing.stripe.com/p/login/test_portal' } },
    }));
    pos = await createLicense(t, {
      customer_email: 'Ana.Petrovic.Procurement.Department.With.A.Long.Local.Part@Example-Company-International.com',
      customer_name: 'Ana Petrović',
      limits: { max_installations: 2 },
    });
    oldLaptop = await insertSeat(t, pos.id, { hostname: 'ANA-OLD-LAPTOP', os: 'Windows 10' });
    stillBound = await insertSeat(t, pos.id, {
      hostname: 'ana-new-desktop-with-a-rather-long-hostname.procurement-department.office.example-company-international.com',
      os: 'Windows 11',
    });
    erp = await createLicense(t, {
      customer_email: CUSTOMER,
      customer_name: 'Ana Petrović',
      product_code: 'ERP_SUITE',
      license_type: 'MONTHLY',
    });
    await t.sql(`UPDATE licenses SET store_name = 'stripe', store_customer_id = 'cus_1', store_subscription_id = 'sub_1' WHERE id = $1`, [
      erp.id,
    ]);
    await createLicense(t, { customer_email: 'someone.else@shop.example' });
    page = await browser.newPage({ viewport: DESKTOP, acceptDownloads: true });
    consoleErrors = collectConsoleErrors(page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it('signs in with the keyboard only: ask for a link, read it from SMTP, press "Sign in"', async () => {
    await page.goto(`${baseUrl}/portal`);
    await page.waitForURL(`${baseUrl}/portal/login`);
    // The address field has focus on arrival; Enter submits.
    await expectFocusAfterLoad(page, 'document.activeElement?.id', 'field-email');
    await page.keyboard.type(CUSTOMER);
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid=link-sent]');
    await screenshot(page, 'portal-link-sent');
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes(CUSTOMER));
    const path = LINK.exec(mail.parsed.text ?? '')?.[1];
    expect(path).toBeDefined();
    await page.goto(`${baseUrl}${path}`);
    await tabTo(page, '[data-testid=sign-in]');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${baseUrl}/portal`);
    expect(await page.textContent('[data-testid=portal-customer]')).toBe(CUSTOMER);
    expect(await page.locator('[data-testid=portal-license-row]').count()).toBe(2);
  });

  it('opens a licence with the keyboard, reveals and shows the key', async () => {
    await page.goto(`${baseUrl}/portal`);
    await tabTo(page, `a[href="/portal/licenses/${pos.id}"]`);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${baseUrl}/portal/licenses/${pos.id}`);
    expect(await page.isVisible('[data-testid=license-key]')).toBe(false);
    await tabTo(page, '[data-testid=reveal-key] summary');
    await page.keyboard.press('Enter');
    expect(await page.textContent('[data-testid=license-key]')).toBe(pos.license_key);
    expect(await page.isVisible(`button[data-copy="${pos.license_key}"]`)).toBe(true);
    expect(await page.textContent('[data-testid=seats]')).toContain('2 of 2 in use');
  });

  it('frees the old machine after a confirmation page of its own: a client deactivation by the customer', async () => {
    await page.goto(`${baseUrl}/portal/licenses/${pos.id}`);
    const row = page.locator('[data-testid=machine-row]', { hasText: 'ANA-OLD-LAPTOP' });
    await row.locator('[data-testid=release-machine]').focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${baseUrl}/portal/licenses/${pos.id}/machines/${oldLaptop.id}/release`);
    expect(await page.textContent('h1')).toBe('Free ANA-OLD-LAPTOP?');
    await screenshot(page, 'portal-release-confirm', { viewport: true });
    // Nothing is freed by asking.
    expect((await t.sql(`SELECT released_at FROM activations WHERE id = $1`, [oldLaptop.id]))[0].released_at).toBeNull();
    await tabTo(page, '[data-testid=confirm-release]');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${baseUrl}/portal/licenses/${pos.id}`);
    expect(await page.textContent('[data-testid=portal-flash]')).toContain('ANA-OLD-LAPTOP was freed');
    expect(await page.locator('[data-testid=machine-row]').count()).toBe(1);
    const [seat] = await t.sql(`SELECT release_reason FROM activations WHERE id = $1`, [oldLaptop.id]);
    expect(seat.release_reason).toBe('deactivated');
    const [entry] = await t.sql(
      `SELECT actor_type, actor FROM audit_entries WHERE license_id = $1 AND action = 'license.deactivated' ORDER BY id DESC LIMIT 1`,
      [pos.id],
    );
    expect(entry).toEqual({ actor_type: 'customer', actor: CUSTOMER });
  });

  it('downloads a licence file for the machine still bound', async () => {
    await page.goto(`${baseUrl}/portal/licenses/${pos.id}`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=download-license-file]')]);
    expect(download.suggestedFilename()).toBe(`${pos.license_key}.lic`);
    const file = readFileSync(await download.path(), 'utf8');
    expect(file).toMatch(/^-----BEGIN LICENSE FILE-----\n/);
    expect(file.trim()).toMatch(/-----END LICENSE FILE-----$/);
  });

  it('links the store-made licence to the store’s own portal', async () => {
    await page.goto(`${baseUrl}/portal/licenses/${erp.id}`);
    expect(await page.getAttribute('[data-testid=store] a', 'href')).toBe('https://billing.stripe.com/p/login/test_portal');
  });

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])('has no serious or critical axe-core violations and no sideways scroll on any portal page (%s)', async (name, size) => {
    const problems: string[] = [];
    const check = async (p: Page, label: string) => {
      problems.push(...(await seriousViolations(p)).map((v) => `${label}: ${v}`));
      const overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) problems.push(`${label}: scrolls ${overflow}px sideways at ${size.width}px`);
      await screenshot(p, `portal-${label}-${name}`, { viewport: true });
    };
    await page.setViewportSize(size);
    // Light, then the dark scheme the portal shares with the dashboard (docs/dashboard.md, Dark mode).
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [label, path] of [
        ['licenses', '/portal'],
        ['license', `/portal/licenses/${pos.id}`],
        ['release-confirm', `/portal/licenses/${pos.id}/machines/${stillBound.id}/release`],
        ['store-license', `/portal/licenses/${erp.id}`],
        ['not-found', '/portal/licenses/999999'],
      ]) {
        await page.goto(`${baseUrl}${path}`);
        await check(page, scheme === 'light' ? label : `${label}-dark`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    // Signed out: the sign-in page, its error next to the field, the answer, and a used link.
    const anonymous = await browser.newPage({ viewport: size });
    await anonymous.goto(`${baseUrl}/portal/login`);
    await check(anonymous, 'login');
    await anonymous.fill('#field-email', 'not an address');
    await anonymous.click('button[type=submit]');
    await anonymous.waitForSelector('#field-email-error');
    expect(await anonymous.getAttribute('#field-email', 'aria-invalid')).toBe('true');
    await check(anonymous, 'login-error');
    await anonymous.goto(`${baseUrl}/portal/sign-in?token=${'x'.repeat(43)}`);
    await check(anonymous, 'sign-in-used');
    await anonymous.close();
    await page.setViewportSize(DESKTOP);
    expect(problems).toEqual([]);
  });

  it('signs out with the keyboard', async () => {
    await page.goto(`${baseUrl}/portal`);
    await tabTo(page, 'form[action="/portal/logout"] button');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${baseUrl}/portal/login`);
    await page.goto(`${baseUrl}/portal`);
    await page.waitForURL(`${baseUrl}/portal/login`);
  });

  it('raised no Content-Security-Policy violations or script errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
