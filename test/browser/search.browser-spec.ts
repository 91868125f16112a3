import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createLicense, CreatedLicense, fingerprint } from '../support/factories';
import type { TestApp } from '../support/test-app';
import { BOTH_WIDTHS, collectConsoleErrors, screenshot, seriousViolations, signIn, startDashboard } from './browser';

/**
 * The top bar's search (docs/dashboard.md, Find a licence or a customer) and the licence page built for the
 * new-laptop ticket (docs/dashboard.md#my-key-stopped-working-on-my-new-laptop) in Chromium, at 1280 and 390 px.
 * On a desktop `/` puts the cursor in the box; on a phone the box is behind **Menu**, which puts the cursor there.
 */
describe('search from the top bar and the support-first licence page in Chromium, at 1280 and 390 px', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let dorde: CreatedLicense;
  let muller: CreatedLicense;
  let sabac: CreatedLicense;
  let ciric: CreatedLicense;
  let lipa: CreatedLicense[];

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    dorde = await createLicense(t, { customer_name: 'Đorđe Petrović', customer_email: 'kancelarija@petrovic.example' });
    muller = await createLicense(t, { customer_name: 'Müller Handels GmbH', customer_email: 'einkauf@handels.example' });
    sabac = await createLicense(t, { customer_name: 'Market Šabac', customer_email: 'market@podrinje.example' });
    ciric = await createLicense(t, { customer_name: 'Knjižara Ćirić', customer_email: 'knjizara@ciric.example' });
    lipa = [];
    for (let i = 1; i <= 3; i++) lipa.push(await createLicense(t, { customer_name: `Pekara Lipa ${i}`, product_code: 'ERP_SUITE' }));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  describe.each(BOTH_WIDTHS)('%s', (width, viewport) => {
    let context: BrowserContext;
    let page: Page;
    let consoleErrors: string[];
    const phone = width === 'phone';

    beforeAll(async () => {
      context = await browser.newContext({ viewport, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      page = await context.newPage();
      consoleErrors = collectConsoleErrors(page);
      await signIn(page, baseUrl);
    }, 60_000);
    afterAll(() => context?.close());

    const go = (path: string) => page.goto(`${baseUrl}${path}`);
    const suggestion = '#topbar-suggestions:not([hidden]) [data-testid=suggestion]';
    /** The cursor into the top bar's box as staff do it: `/` on a desktop, a tap on Menu on a phone. */
    const openSearch = async (): Promise<void> => {
      if (phone) {
        expect(await page.isVisible('#topbar-q')).toBe(false);
        await page.click('[data-menu-toggle]');
      } else {
        await page.keyboard.press('/');
      }
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('topbar-q');
    };
    /** The licence links under the box once the server's results for `term` are in (docs/dashboard.md, Find a licence or a customer). */
    const suggestedLinks = async (term: string): Promise<string[]> => {
      const list = page
        .locator('#topbar-suggestions:not([hidden]) ul')
        .and(page.getByRole('listbox', { name: `Licences matching ${term}`, exact: true }));
      await list.waitFor();
      return list.locator('[data-testid=suggestion] a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    };
    /** Serious axe findings, sideways scroll and the CSP or script errors gathered so far (docs/dashboard.md, Tables). */
    const problems = async (label: string): Promise<string[]> => {
      const found = (await seriousViolations(page)).map((v) => `${label}: ${v}`);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) found.push(`${label}: scrolls ${overflow}px sideways at ${viewport.width}px`);
      return [...found, ...consoleErrors.splice(0).map((e) => `${label}: ${e}`)];
    };

    it('searches from the statistics page, the audit log and a licence page: results as you type, Escape, a click', async () => {
      const found: string[] = [];
      for (const [label, path, term, target] of [
        ['statistics', '/dashboard', 'ciric', ciric],
        ['audit log', '/audit', 'muller', muller],
        ['licence page', `/licenses/${dorde.id}`, 'sabac', sabac],
      ] as const) {
        await go(path);
        await openSearch();
        await page.keyboard.type(term);
        expect(await suggestedLinks(term)).toEqual([`/licenses/${target.id}`]);
        expect(await page.textContent(suggestion)).toContain(target.license_key);
        // Under the box, inside the window, on top of the page.
        const box = await page.locator('#topbar-suggestions').boundingBox();
        const input = await page.locator('#topbar-q').boundingBox();
        expect(box && input && box.y >= input.y + input.height && box.x >= 0 && box.x + box.width <= viewport.width).toBe(true);
        found.push(...(await problems(`${label}, results open`)));
        if (label === 'statistics') await screenshot(page, `search-suggestions-${width}`, { viewport: true });

        await page.keyboard.press('Escape');
        expect(await page.isHidden('#topbar-suggestions')).toBe(true);
        expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('topbar-q');

        // Typing again brings them back (Chromium's search box may have emptied itself on Escape); a click opens the licence.
        await page.keyboard.press('ControlOrMeta+A');
        await page.keyboard.type(term);
        await suggestedLinks(term);
        await page.click(`${suggestion} a[href="/licenses/${target.id}"]`);
        await page.waitForURL(`${baseUrl}/licenses/${target.id}`);
        expect(await page.textContent('[data-testid=license-key]')).toBe(target.license_key);
      }
      expect(found).toEqual([]);
    });

    it.each([
      ['"Đorđe Petrović"', 'djordje petrovic', () => dorde],
      ['"Đorđe Petrović"', 'dorde', () => dorde],
      ['"Đorđe Petrović"', 'Đorđe', () => dorde],
      ['"Müller Handels GmbH"', 'muller', () => muller],
      ['"Market Šabac"', 'sabac', () => sabac],
    ])('finds %s by typing "%s": in the results as you type and with Enter', async (_name, term, licence) => {
      const { id, license_key } = licence();
      await go('/dashboard');
      await openSearch();
      await page.keyboard.type(term);
      expect(await suggestedLinks(term)).toEqual([`/licenses/${id}`]);
      await page.keyboard.press('Enter');
      await page.waitForURL(`${baseUrl}/licenses/${id}`);
      expect(await page.textContent('[data-testid=license-key]')).toBe(license_key);
    });

    it('opens the one matching licence with Enter; several matches show the list for the same search', async () => {
      await go('/audit');
      await openSearch();
      await page.keyboard.type(ciric.license_key.replace(/-/g, '').toLowerCase());
      await page.keyboard.press('Enter');
      await page.waitForURL(`${baseUrl}/licenses/${ciric.id}`);

      await openSearch();
      await page.keyboard.type('pekara lipa');
      expect((await suggestedLinks('pekara lipa')).sort()).toEqual(lipa.map((l) => `/licenses/${l.id}`).sort());
      await page.keyboard.press('Enter');
      await page.waitForURL(`${baseUrl}/licenses?q=pekara+lipa`);
      const keys = await page.$$eval('[data-testid=license-row] a.mono', (links) => links.map((a) => a.textContent ?? ''));
      expect(keys.sort()).toEqual(lipa.map((l) => l.license_key).sort());
      expect(await page.inputValue('#topbar-q')).toBe('pekara lipa');
      expect(await problems('list of several matches')).toEqual([]);
    });

    it('moves through the results with the arrow keys (a combobox and its listbox) and opens the one reached with Enter', async () => {
      await go('/dashboard');
      await openSearch();
      expect(await page.getAttribute('#topbar-q', 'role')).toBe('combobox');
      expect(await page.getAttribute('#topbar-q', 'aria-expanded')).toBe('false');
      await page.keyboard.type('pekara lipa');
      const links = await suggestedLinks('pekara lipa');
      expect(links).toHaveLength(3);
      expect(await page.getAttribute('#topbar-q', 'aria-expanded')).toBe('true');
      expect(await page.getAttribute('#topbar-q', 'aria-controls')).toBe('topbar-suggestions');
      const state = () =>
        page.evaluate<{ active: string | null; selected: string[]; focused: string | undefined }>(`({
          active: document.getElementById('topbar-q').getAttribute('aria-activedescendant'),
          selected: [...document.querySelectorAll('#topbar-suggestions [role=option][aria-selected=true]')].map((o) => o.id),
          focused: document.activeElement?.id,
        })`);
      const options = await page.$$eval('#topbar-suggestions [role=option]', (list) => list.map((o) => o.id));
      expect((await state()).active).toBeNull();
      await page.keyboard.press('ArrowDown');
      expect(await state()).toEqual({ active: options[0], selected: [options[0]], focused: 'topbar-q' });
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await state()).toEqual({ active: options[2], selected: [options[2]], focused: 'topbar-q' });
      // Down from the last comes round to the first; Up from the first goes back to the box alone.
      await page.keyboard.press('ArrowDown');
      expect((await state()).active).toBe(options[0]);
      await page.keyboard.press('ArrowUp');
      expect(await state()).toEqual({ active: null, selected: [], focused: 'topbar-q' });
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect((await state()).active).toBe(options[1]);
      const found = await problems('results with one reached by the arrows');
      await screenshot(page, `search-arrows-${width}`, { viewport: true });
      await page.keyboard.press('Enter');
      await page.waitForURL(`${baseUrl}${links[1]}`);
      expect(found).toEqual([]);
    });

    it('searches with Enter without JavaScript: the same form, no results as you type, the menu open on a phone', async () => {
      const plain = await browser.newContext({ viewport, javaScriptEnabled: false, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      try {
        const noScript = await plain.newPage();
        const errors = collectConsoleErrors(noScript);
        await signIn(noScript, baseUrl);
        await noScript.goto(`${baseUrl}/audit`);
        // Without the script the menu is not folded: no Menu button, the box in sight.
        expect(await noScript.isVisible('[data-menu-toggle]')).toBe(false);
        expect(await noScript.isVisible('#topbar-q')).toBe(true);
        expect(await noScript.isVisible('nav[aria-label=Main]')).toBe(true);
        await noScript.fill('#topbar-q', 'djordje petrovic');
        // Nothing fetches results: give a script the time it would need, then look.
        await noScript.waitForTimeout(400);
        expect(await noScript.isHidden('#topbar-suggestions')).toBe(true);
        expect(await noScript.locator('[data-testid=suggestion]').count()).toBe(0);
        await noScript.press('#topbar-q', 'Enter');
        await noScript.waitForURL(`${baseUrl}/licenses/${dorde.id}`);
        expect(await noScript.textContent('[data-testid=license-key]')).toBe(dorde.license_key);

        await noScript.fill('#topbar-q', 'lipa');
        await noScript.press('#topbar-q', 'Enter');
        await noScript.waitForURL(`${baseUrl}/licenses?q=lipa`);
        expect(await noScript.locator('[data-testid=license-row]').count()).toBe(3);
        const overflow = await noScript.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        expect(overflow).toBeLessThanOrEqual(0);
        expect(errors).toEqual([]);
      } finally {
        await plain.close();
      }
    });

    it('puts the machines and the client events before the fields, the refused machine in a banner, the payload folded', async () => {
      const licence = await createLicense(t, { customer_name: `Salon Nena ${width}`, limits: { max_installations: 2 } });
      const activate = (hostname: string) =>
        t
          .http()
          .post('/api/v1/activate')
          .send({ license_key: licence.license_key, machine_fingerprint: fingerprint(`${width}-${hostname}`), hostname });
      await activate(`front-desk-${width}`).expect(200);
      await activate(`back-office-${width}`).expect(200);
      expect((await activate(`new-laptop-${width}`).expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');

      await go(`/licenses/${licence.id}`);
      expect(await page.locator('[data-testid=seat-row]').count()).toBe(2);
      const events = await page.textContent('[data-testid=client-events]');
      expect(events).toContain('ALREADY_ACTIVATED');
      expect(events).toContain(`new-laptop-${width}`);
      // Document order: machines, then the client's events, then the licence's fields (docs/dashboard.md#my-key-stopped-working-on-my-new-laptop).
      const order = await page.evaluate<string[]>(
        `[...document.querySelectorAll('#seats-heading, [data-testid=client-events], #licence-heading')].map((el) => el.id || el.getAttribute('data-testid'))`,
      );
      expect(order).toEqual(['seats-heading', 'client-events', 'licence-heading']);
      // On a phone the machines are on the first screen, without scrolling.
      expect(await page.evaluate<number>('window.scrollY')).toBe(0);
      const heading = await page.locator('#seats-heading').boundingBox();
      expect(heading && heading.y + heading.height).toBeLessThan(viewport.height);

      // The banner names the refused machine and links to releasing the one silent the longest, the first bound.
      const banner = page.locator('[data-testid=refused-banner]');
      expect(await banner.textContent()).toContain(`new-laptop-${width}`);
      expect(await banner.locator('[data-testid=refused-release]').textContent()).toBe(`Release front-desk-${width}…`);

      const details = page.locator('[data-testid=preview-details]');
      expect(await details.evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(false);
      expect(await page.isVisible('[data-testid=payload-preview]')).toBe(false);
      const found = await problems('licence page');
      await screenshot(page, `licence-support-first-${width}`, { viewport: true });
      await page.click('[data-testid=preview-details] summary');
      expect(await details.evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(true);
      expect(await page.isVisible('[data-testid=payload-preview]')).toBe(true);
      expect(await page.textContent('[data-testid=payload-preview]')).toContain(licence.license_key);
      found.push(...(await problems('licence page, payload open')));
      expect(found).toEqual([]);
    });

    it('raised no Content-Security-Policy violations or script errors', () => {
      expect(consoleErrors).toEqual([]);
    });
  });
});
