import { createLicense } from '../support/factories';
import { BOTH_WIDTHS, DESKTOP, screenshot, seriousViolations, SignedInDashboard, startSignedIn, stopSignedIn } from './browser';

/** Saved views of the licence list (docs/dashboard.md, Saved views) in Chromium, at 1280 and 390 px. */
describe('saved views in Chromium', () => {
  let d: SignedInDashboard;

  const go = (path: string) => d.page.goto(`${d.baseUrl}${path}`);

  beforeAll(async () => {
    d = await startSignedIn();
    for (const [name, status] of [
      ['Pekara Žito', 'active'],
      ['Apoteka Čačak', 'active'],
      ['Market Šabac', 'suspended'],
    ])
      await d.t.sql(`UPDATE licenses SET active = $2 WHERE id = $1`, [
        (await createLicense(d.t, { customer_name: name })).id,
        status === 'active',
      ]);
  }, 60_000);
  afterAll(() => stopSignedIn(d));
  beforeEach(() => d.t.sql('DELETE FROM saved_views'));

  it.each(BOTH_WIDTHS)('saves the view shown, opens it from its link, deletes it, and passes axe (%s)', async (name, size) => {
    const page = d.page;
    await page.setViewportSize(size);
    await go('/licenses?status=suspended&sort=customer_name&dir=asc');
    await page.fill('#view-name', 'Suspended by name');
    await page.click('[data-testid=save-view] button[type=submit]');
    await page.waitForSelector('.flash-success');
    expect(await page.textContent('.flash-success')).toBe('View “Suspended by name” saved.');
    const link = page.locator('[data-testid=saved-view] a');
    expect(await link.getAttribute('aria-current')).toBe('page');

    await go('/licenses');
    expect(await link.getAttribute('aria-current')).toBeNull();
    await link.click();
    await page.waitForURL(/status=suspended/);
    const names = await page.$$eval('[data-testid=license-row] td[data-label=Customer] a', (as) => as.map((a) => a.textContent?.trim()));
    expect(names).toEqual(['Market Šabac']);

    const problems = (await seriousViolations(page)).map((v) => `${name}: ${v}`);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    if (overflow > 0) problems.push(`${name}: scrolls ${overflow}px sideways`);
    const small = await page.evaluate<
      string[]
    >(`[...document.querySelectorAll('[data-testid=saved-views] a, [data-testid=saved-views] button, [data-testid=saved-views] input')]
      .filter((el) => el.getClientRects().length > 0 && el.type !== 'hidden')
      .map((el) => [el, el.getBoundingClientRect()])
      .filter(([, r]) => r.height < 24 || r.width < 24)
      .map(([el, r]) => el.tagName.toLowerCase() + ' ' + Math.round(r.width) + 'x' + Math.round(r.height))`);
    problems.push(...small.map((s) => `${name}: target under 24px: ${s}`));
    expect(problems).toEqual([]);
    await screenshot(page, `saved-views-${name}`, { viewport: true });

    await page.click('[data-testid=saved-view] button[aria-label="Delete the view Suspended by name"]');
    await page.waitForSelector('.flash-success');
    expect(await page.locator('[data-testid=saved-view]').count()).toBe(0);
    await page.setViewportSize(DESKTOP);
  });

  it('raised no Content-Security-Policy violations or script errors', () => {
    expect(d.consoleErrors).toEqual([]);
  });
});
