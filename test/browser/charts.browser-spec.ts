import { createLicense, insertSeat } from '../support/factories';
import { ADMIN } from '../dashboard-helpers';
import { DESKTOP, screenshot, shoot, seriousViolations, SignedInDashboard, startSignedIn, stopSignedIn, BOTH_WIDTHS } from './browser';

/** Charts drawn by uPlot from their tables, under the strict CSP, at both widths and in both schemes (docs/dashboard.md, Charts). */
describe('dashboard charts in Chromium', () => {
  let d: SignedInDashboard;
  let licenseId: number;

  beforeAll(async () => {
    d = await startSignedIn();
    const lic = await createLicense(d.t, { customer_name: 'Pekara Žito', limits: { max_installations: 3 } });
    licenseId = lic.id;
    await insertSeat(d.t, licenseId, { hostname: 'KASA-01' });
    // Licences expiring over the coming month, for the expiring panel's bars.
    for (let i = 0; i < 12; i++) {
      const expiring = await createLicense(d.t, { customer_name: `Market Šabac ${i + 1}`, license_type: 'MONTHLY' });
      await d.t.sql(`UPDATE licenses SET expires_at = now() + $2 * interval '1 day' WHERE id = $1`, [expiring.id, (i * 5) % 28]);
    }
    // A month of client events, so the chart has a shape.
    for (let day = 0; day < 30; day++) {
      for (const [action, n] of [
        ['license.activated', (day * 7) % 5],
        ['license.activation_denied', day % 4 === 0 ? 2 : 0],
        ['license.created', day % 3],
      ] as const) {
        for (let i = 0; i < n; i++) {
          await d.t.sql(
            `INSERT INTO audit_entries (created_at, action, actor_type, license_id, details) VALUES (now() - $1 * interval '1 day', $2, 'client', $3, '{}')`,
            [day, action, licenseId],
          );
        }
      }
    }
  }, 60_000);
  afterAll(() => stopSignedIn(d));

  /** How many rows the chart table named by its caption has (visually hidden, still in the accessibility tree). */
  const chartRows = (caption: RegExp) => d.page.getByRole('table', { name: caption }).locator('tbody tr').count();

  it.each(BOTH_WIDTHS)('draws the statistics chart within the page, keeps its table for screen readers (%s)', async (name, size) => {
    const { page } = d;
    await page.setViewportSize(size);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${d.baseUrl}/dashboard`);
      const chart = page.locator('[data-testid=daily-chart] [data-testid=chart]');
      await chart.locator('canvas').waitFor();
      expect(await chart.getAttribute('aria-hidden')).toBe('true');
      const box = await chart.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= size.width && box.height > 150).toBe(true);
      // The table is out of sight but still read: 30 rows under its caption.
      expect(await chartRows(/Activations, refusals and new licences per UTC day/)).toBe(30);
      expect(
        await page.locator('[data-testid=daily-chart] .chart-table').evaluate((el) => el.getBoundingClientRect().height),
      ).toBeLessThanOrEqual(1);
      // The expiring panel's bars, drawn the same way above its list.
      await page.locator('[data-testid=expiring-panel] [data-testid=chart] canvas').waitFor();
      expect(await chartRows(/Usable licences expiring per UTC day/)).toBe(30);
      // The legend names the three series.
      expect(await chart.textContent()).toMatch(/Activations.*Refusals.*New licences/);
      expect(await seriousViolations(page)).toEqual([]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
      await page.locator('[data-testid=daily-chart]').scrollIntoViewIfNeeded();
      await shoot(page.locator('[data-testid=daily-chart]'), `chart-statistics-${scheme}-${name}`);
      await shoot(page.locator('[data-testid=expiring-panel]'), `chart-expiring-${scheme}-${name}`);
      await screenshot(page, `statistics-chart-${scheme}-${name}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it.each(BOTH_WIDTHS)('draws the licence page chart and its seat meter (%s)', async (name, size) => {
    const { page } = d;
    await page.setViewportSize(size);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${d.baseUrl}/licenses/${licenseId}`);
      const section = page.locator('[data-testid=license-chart]');
      await section.locator('[data-testid=chart] canvas').waitFor();
      expect(await chartRows(/Activations and refusals of this licence/)).toBe(30);
      expect(await page.getByRole('meter', { name: 'Seats in use: 1 of 3' }).count()).toBe(1);
      const box = await section.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= size.width).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
      await shoot(section, `chart-licence-${scheme}-${name}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it.each(BOTH_WIDTHS)("shows one product's days with week and month totals, picked from the select (%s)", async (name, size) => {
    const { page } = d;
    await page.setViewportSize(size);
    await page.goto(`${d.baseUrl}/dashboard`);
    const panel = page.locator('[data-testid=product-daily]');
    await panel.getByLabel('Product').selectOption('POS_RETAIL');
    await Promise.all([page.waitForURL(/product=POS_RETAIL/), panel.getByRole('button', { name: 'Show' }).click()]);
    await panel.locator('[data-testid=chart] canvas').waitFor();
    expect(await panel.getByRole('heading', { level: 2 }).textContent()).toMatch(/Per day: POS_RETAIL/);
    expect(await chartRows(/Events of POS_RETAIL per UTC day/)).toBe(30);
    // The totals stay a visible table: the last 7 and 30 days of the seeded month (activations: (day * 7) % 5 a day).
    const totals = page.getByRole('table', { name: /Totals of POS_RETAIL/ });
    expect(await totals.locator('tbody tr').count()).toBe(2);
    const activations = (days: number) => Array.from({ length: days }, (_, day) => (day * 7) % 5).reduce((a, b) => a + b, 0);
    expect(await totals.locator('tbody tr').nth(0).locator('td').first().textContent()).toBe(String(activations(7)));
    expect(await totals.locator('tbody tr').nth(1).locator('td').first().textContent()).toBe(String(activations(30)));
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await shoot(panel, `statistics-per-product-${name}`);
  });

  it('shows the table itself without JavaScript', async () => {
    const context = await d.browser.newContext({ javaScriptEnabled: false, viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${d.baseUrl}/login`);
    await page.fill('input[name=username]', ADMIN.username);
    await page.fill('input[name=password]', ADMIN.password);
    await page.click('button[type=submit]');
    await page.waitForURL(`${d.baseUrl}/dashboard`);
    expect(await page.isVisible('[data-testid=daily-chart] table')).toBe(true);
    expect(await page.locator('[data-testid=daily-chart] canvas').count()).toBe(0);
    await context.close();
  });

  it('raised no Content-Security-Policy violations or script errors', () => {
    expect(d.consoleErrors).toEqual([]);
  });
});
