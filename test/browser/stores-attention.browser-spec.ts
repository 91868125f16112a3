import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestApp } from '../support/test-app';
import { BOTH_WIDTHS, collectConsoleErrors, screenshot, seriousViolations, signIn, startDashboard } from './browser';

/**
 * Store events needing attention in Chromium (docs/dashboard.md, Pages): the overview's count opens the Stores page
 * filtered to them, and the page says what each store feature needs; axe finds nothing serious, no sideways scroll.
 */
describe('stores: events needing attention and what each feature needs, at 1280 and 390 px', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard({
      stores: { stripeWebhookSecret: 'whsec_browser_attention_01234', acceptTestEvents: false },
    }));
    // The ledger as a seller finds it: two events needing attention, one that does not.
    const rows: [string, string, string, string][] = [
      ['evt_browser_failed', 'checkout.session.completed', 'failed', 'STORE_API_KEY_MISSING'],
      ['evt_browser_noplan', 'invoice.paid', 'ignored', 'NO_PLAN'],
      ['evt_browser_type', 'customer.created', 'ignored', 'UNHANDLED_TYPE'],
    ];
    for (const [eventId, type, status, reason] of rows)
      await t.sql(
        `INSERT INTO store_events (store, event_id, type, status, reason_code, error, payload) VALUES ('stripe', $1, $2, $3, $4, $5, '{}')`,
        [eventId, type, status, reason, `${reason.toLowerCase().replace(/_/g, ' ')}: a long explanation of why, to wrap on a phone`],
      );
    context = await browser.newContext({ timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
    page = await context.newPage();
    consoleErrors = collectConsoleErrors(page);
    await signIn(page, baseUrl);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const problems = async (label: string, width: number): Promise<string[]> => {
    const found = (await seriousViolations(page)).map((v) => `${label}: ${v}`);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    if (overflow > 0) found.push(`${label}: scrolls ${overflow}px sideways at ${width}px`);
    return found;
  };

  it.each(BOTH_WIDTHS)(
    '%s: the overview count opens the filtered list; the feature table names keys and outbound access',
    async (name, size) => {
      await page.setViewportSize(size);
      await page.goto(`${baseUrl}/dashboard`);
      expect(await page.textContent('[data-testid=store-attention] [data-testid=attention-count]')).toBe('2');
      const found = await problems(`overview ${name}`, size.width);

      await page.click('[data-testid=store-attention] a');
      await page.waitForURL(/\/stores\?needs_attention=true/);
      expect(await page.textContent('h2#events-heading')).toBe('Events needing attention');
      const reasons = await page.$$eval('[data-testid=event-row] [data-testid=event-reason]', (els) => els.map((e) => e.textContent));
      expect(reasons.sort()).toEqual(['NO_PLAN', 'STORE_API_KEY_MISSING']);
      expect(await page.textContent('main [data-testid=store-attention]')).toContain('2 store events need attention');
      const checkout = page.locator('[data-testid=feature-row]', { hasText: 'One-time Checkout' });
      expect(await checkout.textContent()).toContain('HTTPS to api.stripe.com');
      expect(await checkout.locator('[data-testid=feature-state]').textContent()).toBe('not configured');
      found.push(...(await problems(`stores filtered ${name}`, size.width)));
      await screenshot(page, `stores-attention-${name}`, { viewport: true });
      expect(found).toEqual([]);
      expect(consoleErrors).toEqual([]);
    },
  );
});
