import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createLicense, insertSeat } from '../support/factories';
import type { TestApp } from '../support/test-app';
import { collectConsoleErrors, DESKTOP, PHONE, screenshot, seriousViolations, signIn, startDashboard } from './browser';

/** A customer's page (docs/dashboard.md, A customer's page) in Chromium, at 1280 and 390 px. */
describe("the customer page in Chromium (from a customer's name, notes, both widths)", () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];
  let pos: { id: number; license_key: string };
  // A long unbreakable address (docs/dashboard.md, Tables): the page must still fit a 390 px screen.
  const EMAIL = 'nabavka.procurement.department.with.a.very.long.local.part@zeljo-company-international.example';

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    pos = await createLicense(t, { customer_name: 'Ćevapdžinica Željo', customer_email: EMAIL, customer_pib: '101134702' });
    const erp = await createLicense(t, {
      product_code: 'ERP_SUITE',
      customer_name: 'Željo d.o.o.',
      customer_email: 'Nabavka.Procurement.Department.With.A.Very.Long.Local.Part@Zeljo-Company-International.example',
    });
    await insertSeat(t, pos.id, { hostname: 'zeljo-kasa-sarajevska-ulica-broj-01', os: 'Windows 11', ip: '::ffff:198.51.100.4' });
    await insertSeat(t, erp.id, { hostname: 'zeljo-office', os: 'Windows 11', ip: '198.51.100.5' });
    // Refused two days ago: the list rows carry the mark (docs/dashboard.md, Refused recently).
    await t.sql(
      `INSERT INTO audit_entries (created_at, action, actor_type, actor, ip, license_id, product_code, details)
       VALUES (now() - interval '2 days', 'license.activation_denied', 'client', '198.51.100.6', '198.51.100.6', $1, 'POS_RETAIL',
               '{"code":"ALREADY_ACTIVATED","hostname":"zeljo-kasa-sarajevska-ulica-broj-02-druga-kasa.zeljo-company-international.example"}')`,
      [pos.id],
    );
    for (let i = 0; i < 3; i++)
      await t.admin
        .put(`/api/v1/admin/licenses/${pos.id}`)
        .send({ notes: `call ${i}` })
        .expect(200);
    context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
    page = await context.newPage();
    consoleErrors = collectConsoleErrors(page);
    await signIn(page, baseUrl);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Serious axe findings, sideways scroll and controls under 24x24 px (docs/dashboard.md, Tables). */
  const problems = async (label: string, width: number): Promise<string[]> => {
    const found = (await seriousViolations(page)).map((v) => `${label}: ${v}`);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    if (overflow > 0) found.push(`${label}: scrolls ${overflow}px sideways at ${width}px`);
    const small = await page.evaluate<string[]>(`[...document.querySelectorAll('main button, main a.button, main textarea, main table a')]
      .filter((el) => el.getClientRects().length > 0)
      .map((el) => [el, el.getBoundingClientRect()])
      .filter(([, r]) => r.height < 24 || r.width < 24)
      .map(([el, r]) => el.tagName.toLowerCase() + ' ' + Math.round(r.width) + 'x' + Math.round(r.height))`);
    return [...found, ...small.map((s) => `${label}: target under 24px at ${width}px: ${s}`)];
  };

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])('is reached from the name in search results, adds a note, and passes axe (%s)', async (name, size) => {
    await page.setViewportSize(size);
    await page.goto(`${baseUrl}/licenses?q=zeljo`);
    await page.click(`[data-testid=license-row] >> [data-testid=customer-link] >> nth=0`);
    await page.waitForURL(/\/licenses\/customer\?email=/);
    expect(await page.locator('[data-testid=license-row]').count()).toBe(2);
    expect(await page.locator('[data-testid=customer-machine]').count()).toBe(2);
    expect(await page.locator('[data-testid=audit-row]').count()).toBeGreaterThanOrEqual(5);
    const found = await problems(`customer ${name}`, size.width);

    await page.click('button:has-text("Add note")');
    await page.waitForSelector('[data-error-summary]');
    expect(await page.isVisible('#field-note-error')).toBe(true);
    found.push(...(await problems(`customer note error ${name}`, size.width)));

    await page.fill('#field-note', `Calls before noon (${name}).\nPays by bank transfer.`);
    await page.click('button:has-text("Add note")');
    await page.waitForURL(/#notes$/);
    expect(await page.textContent('[role=status].flash')).toContain('Note added.');
    expect(await page.textContent('[data-testid=customer-note] >> nth=0')).toContain(`Calls before noon (${name}).`);
    found.push(...(await problems(`customer with a note ${name}`, size.width)));
    await page.goto(page.url().replace(/#notes$/, ''));
    await screenshot(page, `customer-page-${name}`, { viewport: true });
    expect(found).toEqual([]);
  });

  it("from a licence page, the customer's name opens the page; from the top bar, the whole address", async () => {
    await page.setViewportSize(DESKTOP);
    await page.goto(`${baseUrl}/licenses/${pos.id}`);
    await page.click('[data-testid=customer-name] a');
    await page.waitForURL(`${baseUrl}/licenses/customer?email=${encodeURIComponent(EMAIL)}`);
    expect(await page.textContent('h1')).toContain('Željo');
    // From the top bar, the whole address and Enter: no click at all.
    await page.goto(`${baseUrl}/dashboard`);
    await page.fill('#topbar-q', EMAIL.toUpperCase());
    await page.press('#topbar-q', 'Enter');
    await page.waitForURL(`${baseUrl}/licenses/customer?email=${encodeURIComponent(EMAIL.toUpperCase())}`);
    expect(await page.locator('[data-testid=license-row]').count()).toBe(2);
    expect(consoleErrors).toEqual([]);
  });
});
