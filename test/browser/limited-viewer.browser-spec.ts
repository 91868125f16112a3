import type { Browser, BrowserContext, Page } from 'playwright-core';
import { UsersService } from '../../src/staff/users.service';
import { createLicense, fingerprint } from '../support/factories';
import type { TestApp } from '../support/test-app';
import { BOTH_WIDTHS, collectConsoleErrors, screenshot, seriousViolations, startDashboard } from './browser';

const PASSWORD = 'staff-password-123';

/**
 * docs/dashboard.md, Limited accounts: a viewer limited to ERP_SUITE walks every page it can open in Chromium at
 * 1280x800 and 390x844: none answers 403, none shows another product, statistics name its product, axe finds no
 * serious or critical problem.
 */
describe('a viewer limited to one product in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let erp: { id: number; license_key: string };
  let pos: { id: number; license_key: string };

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    erp = await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Kafana Lipa', customer_email: 'lipa@example.rs' });
    await createLicense(t, {
      product_code: 'ERP_SUITE',
      customer_name: 'Kafana Brzo',
      expires_at: new Date(Date.now() + 4 * 86_400_000).toISOString(),
    });
    pos = await createLicense(t, { product_code: 'POS_RETAIL', customer_name: 'Kafana Lipa', customer_email: 'lipa@example.rs' });
    await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: erp.license_key, machine_fingerprint: fingerprint('lipa-erp'), hostname: 'lipa-kasa' })
      .expect(200);
    await t.app.get(UsersService).setPassword('erp-viewer', PASSWORD, 'viewer');
    await t.sql(
      `UPDATE users SET product_ids = (SELECT array_agg(id) FROM products WHERE code = 'ERP_SUITE') WHERE username = 'erp-viewer'`,
    );
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  }, 60_000);

  describe.each(BOTH_WIDTHS)('at %s width', (name, viewport) => {
    let context: BrowserContext;
    let page: Page;
    let consoleErrors: string[];
    const refused: string[] = [];
    const phone = viewport.width < 600;

    beforeAll(async () => {
      context = await browser.newContext({ viewport, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      page = await context.newPage();
      consoleErrors = collectConsoleErrors(page);
      page.on('response', (res) => {
        if (res.status() === 403 || res.status() === 404) refused.push(`${res.status()} ${res.url()}`);
      });
      await page.goto(`${baseUrl}/login`);
      await page.fill('input[name=username]', 'erp-viewer');
      await page.fill('input[name=password]', PASSWORD);
      await page.click('button[type=submit]');
      await page.waitForURL(`${baseUrl}/dashboard`);
    }, 60_000);
    afterAll(async () => {
      await context?.close();
    }, 60_000);

    /** Serious axe findings, sideways scroll, script or CSP errors, refused requests, and any sight of the other product. */
    const problems = async (label: string): Promise<string[]> => {
      const found = (await seriousViolations(page)).map((v) => `${label}: ${v}`);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) found.push(`${label}: scrolls ${overflow}px sideways`);
      const html = await page.content();
      if (html.includes(pos.license_key) || html.includes('POS_RETAIL')) found.push(`${label}: shows the POS product`);
      if (/href="\/licenses\/new"/.test(html)) found.push(`${label}: draws New licence for a viewer`);
      found.push(...consoleErrors.splice(0).map((e) => `${label}: ${e}`), ...refused.splice(0).map((r) => `${label}: ${r}`));
      return found;
    };

    it('statistics: counted for ERP_SUITE and labelled with its name, no "all products"', async () => {
      await page.goto(`${baseUrl}/dashboard`);
      const text = (await page.textContent('main')) ?? '';
      expect(text).toContain('(ERP_SUITE)');
      expect(text.toLowerCase()).not.toContain('all products');
      expect(await page.locator('[data-testid=expiring-row]').count()).toBe(1);
      await screenshot(page, `limited-viewer-statistics-${name}`, { viewport: true });
      expect(await problems('statistics')).toEqual([]);
    });

    it('the licence list, the customer through its link, then a licence of its product', async () => {
      await page.goto(`${baseUrl}/licenses`);
      expect(await page.locator('[data-testid=license-row]').count()).toBe(2);
      const found = await problems('list');
      await page.locator('[data-testid=license-row] [data-testid=customer-link]', { hasText: 'Kafana Lipa' }).click();
      await page.waitForURL(/\/licenses\/customer\?/);
      expect(await page.textContent('main')).toContain('lipa-kasa');
      found.push(...(await problems('customer')));
      await page.goto(`${baseUrl}/licenses/${erp.id}`);
      found.push(...(await problems('licence')));
      expect(found).toEqual([]);
    });

    it('the top bar: results as it types are its product’s; Enter on a whole key opens the licence', async () => {
      await page.goto(`${baseUrl}/dashboard`);
      if (phone) await page.click('[data-menu-toggle]');
      await page.fill('#topbar-q', 'Kafana Lipa');
      const list = page.getByRole('listbox', { name: 'Licences matching Kafana Lipa', exact: true });
      await list.waitFor();
      const links = await list.locator('[data-testid=suggestion] a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      expect(links).toEqual([`/licenses/${erp.id}`]);
      const found = await problems('suggestions');
      await page.fill('#topbar-q', erp.license_key);
      await page.press('#topbar-q', 'Enter');
      await page.waitForURL(`${baseUrl}/licenses/${erp.id}`);
      found.push(...(await problems('search')));
      expect(found).toEqual([]);
    });

    it('the audit log of its product', async () => {
      await page.goto(`${baseUrl}/audit`);
      expect(await problems('audit')).toEqual([]);
    });
  });
});
