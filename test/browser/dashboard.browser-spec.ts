import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../support/test-app';
import { ADMIN } from '../dashboard-helpers';
import { insertSeat } from '../support/factories';
import { collectConsoleErrors, screenshot, startDashboard } from './browser';

describe('dashboard in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    consoleErrors = collectConsoleErrors(page);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('sends an anonymous visitor to the login page and logs in', async () => {
    await page.goto(`${baseUrl}/licenses`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await screenshot(page, '01-login');
    await page.fill('input[name=username]', ADMIN.username);
    await page.fill('input[name=password]', 'not-the-password');
    await page.click('button[type=submit]');
    await expect(page.textContent('[role=alert]')).resolves.toContain('Invalid username or password.');
    await page.fill('input[name=password]', ADMIN.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${baseUrl}/dashboard`);
    expect(await page.textContent('[data-testid=current-user]')).toBe(ADMIN.username);
    expect(await page.locator('[data-testid=product-stats]').count()).toBeGreaterThan(0);
    await screenshot(page, '02-dashboard');
  });

  it('creates a licence through the form, showing errors with the typed values first', async () => {
    await page.click('nav >> text=New licence');
    await page.waitForURL(`${baseUrl}/licenses/new`);
    const products = await page.$$eval('select[name=product_code] option', (options) =>
      options.map((o) => o.getAttribute('value') as string),
    );
    const product = products[1];
    await page.selectOption('select[name=product_code]', product);
    // The tiny script shows only the chosen product's features.
    for (const code of products) expect(await page.isVisible(`[data-product-group="${code}"]`)).toBe(code === product);
    const features = page.locator(`[data-product-group="${product}"] input[type=checkbox]`);
    const featureNames = await features.evaluateAll((inputs) => inputs.map((i) => i.getAttribute('value') as string));
    expect(featureNames.length).toBeGreaterThan(1);
    await features.first().uncheck();
    await page.selectOption('select[name=license_type]', 'YEARLY');
    await page.fill('input[name=customer_name]', 'Browser Test d.o.o. <b>bold</b>');
    await page.fill('input[name=customer_email]', 'not-an-email');
    await page.fill('textarea[name=notes]', 'Created in a real browser');
    await screenshot(page, '03-new-license');
    await page.click('button:has-text("Create licence")');
    await expect(page.textContent('.field-error')).resolves.toContain('Customer e-mail must be an email address');
    expect(await page.inputValue('input[name=customer_name]')).toBe('Browser Test d.o.o. <b>bold</b>');
    expect(await page.inputValue('select[name=product_code]')).toBe(product);
    expect(await features.first().isChecked()).toBe(false);
    await screenshot(page, '04-new-license-errors');

    await page.fill('input[name=customer_email]', 'office@example.rs');
    await page.click('button:has-text("Create licence")');
    await page.waitForURL(/\/licenses\/\d+$/);
    expect(await page.textContent('.flash-success')).toMatch(/Licence .+ created/);
    expect(await page.textContent('[data-testid=customer-name]')).toBe('Browser Test d.o.o. <b>bold</b>');
    const preview = JSON.parse((await page.textContent('[data-testid=payload-preview]')) as string);
    expect(preview.license.features).toEqual(featureNames.slice(1));
    expect(preview.license.product).toBe(product);
    await screenshot(page, '05-license-details');
  });

  it('shows a bound machine with its signed payload and force-releases it', async () => {
    const id = Number(new URL(page.url()).pathname.split('/').pop());
    await insertSeat(t, id, { hostname: 'till-01', os: 'Windows 11', app_version: '4.2.0', ip: '203.0.113.7' });
    await page.reload();
    expect(await page.locator('[data-testid=seat-row]').count()).toBe(1);
    const preview = JSON.parse((await page.textContent('[data-testid=payload-preview]')) as string);
    expect(preview.signature).toMatch(/^RSA-SHA256:/);
    await screenshot(page, '05b-license-with-seat');
    await page.click('[data-testid=seat-row] >> text=Release…');
    await page.click('[data-testid=confirm-button]');
    await page.waitForSelector('.flash-success');
    expect(await page.textContent('.flash-success')).toContain('1 seat released.');
    expect(await page.locator('[data-testid=seat-row]').count()).toBe(0);
  });

  it('revokes the licence with a reason and finds it in the list and the audit log', async () => {
    const key = (await page.textContent('[data-testid=license-key]')) as string;
    await page.click('text=Revoke…');
    await page.fill('textarea[name=reason]', 'Customer asked to cancel');
    await page.click('[data-testid=confirm-button]');
    await page.waitForSelector('.flash-success');
    expect(await page.textContent('.flash-success')).toContain('Licence revoked.');
    expect(await page.textContent('.page-head .badge')).toBe('revoked');
    await screenshot(page, '06-license-revoked');

    await page.click('nav >> text=Licences');
    await page.fill('#filter-q', key);
    await page.click('#list-filters button[type=submit]');
    await page.waitForURL(/\/licenses\?/);
    const rows = page.locator('[data-testid=license-row]');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().locator('.badge').textContent()).toBe('revoked');
    await screenshot(page, '07-license-list');

    await page.click('nav >> text=Audit log');
    await page.selectOption('select[name=action]', 'license.revoked');
    await page.click('button:has-text("Filter")');
    await page.waitForURL(/action=license.revoked/);
    const entry = page.locator('[data-testid=audit-row]').first();
    expect(await entry.textContent()).toContain('Customer asked to cancel');
    expect(await entry.textContent()).toContain(`${ADMIN.username} (dashboard)`);
    await page.click('nav >> text=Audit log');
    await screenshot(page, '08-audit');
  });

  it('rotates the signing key through the confirmation page', async () => {
    // The settings pages sit under the menu's More (docs/dashboard.md, Pages).
    await page.click('nav details.nav-more > summary');
    await page.click('nav >> text=Signing keys');
    await page.waitForURL(`${baseUrl}/signing-keys`);
    expect(await page.locator('[data-testid=signing-key-row]').count()).toBe(1);
    await page.click('text=Rotate…');
    await page.waitForURL(`${baseUrl}/signing-keys/rotate`);
    await screenshot(page, '08a-signing-key-rotate');
    await page.click('button:has-text("Rotate now")');
    await page.waitForSelector('.flash-success');
    expect(await page.textContent('.flash-success')).toMatch(/is now active/);
    const rows = page.locator('[data-testid=signing-key-row]');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).locator('.badge').textContent()).toBe('retired');
    await screenshot(page, '08b-signing-keys');
  });

  it('raised no Content-Security-Policy violations or script errors on the dashboard pages', () => {
    expect(consoleErrors).toEqual([]);
  });

  it('keeps Swagger UI at /api/docs working under the same CSP', async () => {
    const docs = await browser.newPage();
    const errors = collectConsoleErrors(docs);
    await docs.goto(`${baseUrl}/api/docs`);
    await docs.waitForSelector('.swagger-ui .information-container');
    await screenshot(docs, '09-api-docs');
    expect(errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
    await docs.close();
  });

  it('logs out', async () => {
    await page.click('button:has-text("Log out")');
    await page.waitForURL(`${baseUrl}/login`);
    await page.goto(`${baseUrl}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });
});
