import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createLicense, type CreatedLicense } from '../support/factories';
import type { TestApp } from '../support/test-app';
import { BOTH_WIDTHS, collectConsoleErrors, DESKTOP, PHONE, screenshot, seriousViolations, signIn, startDashboard } from './browser';

const DAY = 86_400_000;

/**
 * Bulk actions on the licence list (docs/dashboard.md, Bulk actions) in Chromium, at 1280 and 390 px: rows ticked by
 * hand and with "This page", all matching a search, the confirmation with its errors, the operation's page (its script
 * follows a job of more than 100 licences to the end), the export, and the same form without JavaScript.
 */
describe('bulk actions in Chromium (select, confirm, follow the progress, export; both widths, with and without JavaScript)', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
    page = await context.newPage();
    consoleErrors = collectConsoleErrors(page);
    await signIn(page, baseUrl);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** `n` licences for one customer name (a search for it finds exactly them), created ten at a time. */
  const many = async (n: number, name: string): Promise<CreatedLicense[]> => {
    const made: CreatedLicense[] = [];
    for (let i = 0; i < n; i += 10)
      made.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => createLicense(t, { customer_name: name })))));
    return made;
  };
  const expiry = async (id: number) =>
    (await t.sql<{ expires_at: Date | null }>('SELECT expires_at FROM licenses WHERE id = $1', [id]))[0].expires_at?.getTime() ?? null;
  const operationId = (url: string) => Number(/\/licenses\/bulk\/(\d+)$/.exec(url)?.[1]);
  const rowBox = (id: number) => `input[name=ids][value="${id}"]`;

  /**
   * Serious axe findings, sideways scroll and controls under 24x24 px in the page's main part (docs/dashboard.md, Tables);
   * a checkbox or radio button counts with its label, which takes the click too.
   */
  const problems = async (p: Page, label: string, width: number): Promise<string[]> => {
    const found = (await seriousViolations(p)).map((v) => `${label}: ${v}`);
    const overflow = await p.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    if (overflow > 0) found.push(`${label}: scrolls ${overflow}px sideways at ${width}px`);
    const small = await p.evaluate<
      string[]
    >(`[...document.querySelectorAll('main button, main a.button, main select, main textarea, main input:not([type=hidden]), main a')]
      .map((el) => (el.matches('input[type=checkbox], input[type=radio]') && el.closest('label')) || el)
      .filter((el) => el.getClientRects().length > 0 && !el.closest('p, .hint, .flash, .error-summary'))
      .map((el) => [el, el.getBoundingClientRect()])
      .filter(([, r]) => r.height < 24 || r.width < 24)
      .map(([el, r]) => el.tagName.toLowerCase() + ' "' + (el.textContent || el.getAttribute('name') || '').trim().slice(0, 30) + '" ' + Math.round(r.width) + 'x' + Math.round(r.height))`);
    return [...found, ...small.map((s) => `${label}: target under 24px at ${width}px: ${s}`)];
  };

  it.each(BOTH_WIDTHS)(
    'ticks rows by hand and with "This page", extends them by days after a refused 0, and the page says Finished (%s)',
    async (name, size) => {
      await page.setViewportSize(size);
      const customer = `Bulk Pick Pekara ${name}`;
      const [a, b, c] = await many(3, customer);
      const before = { a: await expiry(a.id), b: await expiry(b.id), c: await expiry(c.id) };
      await page.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}`);
      expect(await page.locator('[data-testid=license-row]').count()).toBe(3);

      await page.click(rowBox(a.id));
      await page.click(rowBox(c.id));
      expect(await page.textContent('[data-selected-count]')).toBe('Selected rows (2)');
      expect(await page.evaluate<boolean>(`document.querySelector('[data-select-all]').indeterminate`)).toBe(true);
      // "This page" ticks every row; unticking one row by hand leaves the other two.
      await page.click('[data-select-page]');
      for (const l of [a, b, c]) expect(await page.isChecked(rowBox(l.id))).toBe(true);
      expect(await page.textContent('[data-selected-count]')).toBe('Selected rows (3)');
      await page.click(rowBox(b.id));
      expect(await page.textContent('[data-selected-count]')).toBe('Selected rows (2)');
      expect(await page.isChecked('[data-select-all]')).toBe(false);
      await page.selectOption('[data-testid=bulk-action]', 'extend');
      const found = await problems(page, `list with the bar ${name}`, size.width);
      await screenshot(page, `bulk-bar-${name}`, { viewport: true });

      await page.click('[data-testid=bulk-continue]');
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await page.textContent('h1')).toBe('Extend 2 licences');
      expect(await page.textContent('[data-testid=bulk-confirm] > p >> nth=0')).toBe('The 2 licences you selected.');
      const sample = await page.textContent('[data-testid=bulk-sample]');
      expect(sample).toContain(a.license_key);
      expect(sample).toContain(c.license_key);
      expect(sample).not.toContain(b.license_key);
      found.push(...(await problems(page, `confirmation ${name}`, size.width)));

      await page.fill('#field-days', '0');
      await page.click('[data-testid=bulk-confirm-button]');
      await page.waitForSelector('[data-error-summary]');
      expect(await page.textContent('#field-days-error')).toContain('Days must be at least 1');
      expect(await page.getAttribute('#field-days', 'aria-invalid')).toBe('true');
      expect(await page.textContent('[data-testid=bulk-confirm] > p >> nth=0')).toBe('The 2 licences you selected.');
      found.push(...(await problems(page, `confirmation with errors ${name}`, size.width)));
      await screenshot(page, `bulk-confirm-${name}`, { viewport: true });
      expect(await expiry(a.id)).toBe(before.a);

      await page.fill('#field-days', '30');
      await page.click('[data-testid=bulk-confirm-button]');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[role=status].flash')).toContain('Extend: 2 licences processed.');
      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 2 of 2');
      expect(await page.textContent('[data-testid=bulk-counts]')).toBe('2 changed · 0 skipped');
      found.push(...(await problems(page, `operation ${name}`, size.width)));
      expect(await expiry(a.id)).toBe(Number(before.a) + 30 * DAY);
      expect(await expiry(c.id)).toBe(Number(before.c) + 30 * DAY);
      expect(await expiry(b.id)).toBe(before.b);
      expect(found).toEqual([]);
    },
  );

  /** The preview's "after" dates on the confirmation page, by licence id (ISO, as the server wrote them). */
  const previewAfter = async (p: Page): Promise<Map<number, string | null>> =>
    new Map(
      await p.$$eval('[data-testid=bulk-preview-row]', (rows) =>
        rows.map((r): [number, string | null] => [
          Number(r.getAttribute('data-license')),
          r.querySelector('[data-testid=bulk-preview-after] time')?.getAttribute('datetime') ?? null,
        ]),
      ),
    );

  it.each(BOTH_WIDTHS)(
    'extends with an empty field a quick pick fills, previews each new date, asks again past a year, then undoes it (%s)',
    async (name, size) => {
      await page.setViewportSize(size);
      const customer = `Bulk Safe Kiosk ${name}`;
      const made = await many(3, customer);
      const before = new Map(await Promise.all(made.map(async (l) => [l.id, Number(await expiry(l.id))] as const)));
      await page.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}`);
      await page.click('[data-testid=bulk-all]');
      await page.selectOption('[data-testid=bulk-action]', 'extend');
      await page.click('[data-testid=bulk-continue]');
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      // Empty: typing 30 gives 30, not 3030.
      expect(await page.inputValue('#field-days')).toBe('');
      await page.click('#field-days');
      await page.keyboard.type('30');
      expect(await page.inputValue('#field-days')).toBe('30');
      await page.fill('#field-days', '');
      expect(await page.locator('[data-testid=bulk-preview-row]').count()).toBe(3);
      const found = await problems(page, `extend confirmation ${name}`, size.width);

      // A quick pick fills the field and shows each new date beside the old.
      await page.getByRole('button', { name: '30 days', exact: true }).click();
      await page.waitForSelector('[data-testid=bulk-preset][aria-pressed=true]');
      expect(await page.inputValue('#field-days')).toBe('30');
      const preview = await previewAfter(page);
      for (const l of made) expect(preview.get(l.id)).toBe(new Date((before.get(l.id) as number) + 30 * DAY).toISOString());
      found.push(...(await problems(page, `extend preview ${name}`, size.width)));
      await screenshot(page, `bulk-preview-${name}`, { viewport: true });

      // Past a year: a second step naming the days and the dates; nothing changed yet.
      await page.fill('#field-days', '400');
      await page.click('[data-testid=bulk-confirm-button]');
      await page.waitForSelector('[data-testid=bulk-long-days]');
      expect(await page.textContent('h1')).toBe('Extend 3 licences by 400 days?');
      const long = await previewAfter(page);
      for (const l of made) expect(long.get(l.id)).toBe(new Date((before.get(l.id) as number) + 400 * DAY).toISOString());
      for (const l of made) expect(await expiry(l.id)).toBe(before.get(l.id));
      found.push(...(await problems(page, `second confirmation ${name}`, size.width)));
      await screenshot(page, `bulk-long-days-${name}`, { viewport: true });
      await page.click('[data-testid=bulk-confirm-button]');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      const op = operationId(page.url());
      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 3 of 3');
      for (const l of made) expect(await expiry(l.id)).toBe((before.get(l.id) as number) + 400 * DAY);

      // Undo: its page previews the way back, then a new operation moves each licence back.
      await page.click('[data-testid=bulk-undo]');
      await page.waitForURL(`${baseUrl}/licenses/bulk/${op}/undo`);
      const back = await previewAfter(page);
      for (const l of made) expect(back.get(l.id)).toBe(new Date(before.get(l.id) as number).toISOString());
      found.push(...(await problems(page, `undo confirmation ${name}`, size.width)));
      await screenshot(page, `bulk-undo-${name}`, { viewport: true });
      await page.click('[data-testid=bulk-undo-confirm]');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(operationId(page.url())).not.toBe(op);
      expect(await page.textContent('[role=status].flash')).toContain('Undo: 3 licences processed.');
      expect(await page.textContent('h1')).toBe(`Undo of bulk operation ${op}`);
      for (const l of made) expect(await expiry(l.id)).toBe(before.get(l.id));
      found.push(...(await problems(page, `undo operation ${name}`, size.width)));
      await page.goto(`${baseUrl}/licenses/bulk/${op}`);
      expect(await page.isVisible('[data-testid=bulk-undone-by]')).toBe(true);
      expect(await page.locator('[data-testid=bulk-undo]').count()).toBe(0);
      expect(found).toEqual([]);
    },
  );

  it('shift and a click ticks the range from the last row clicked, and unticks one the same way', async () => {
    await page.setViewportSize(DESKTOP);
    const customer = 'Bulk Shift Pekara';
    await many(6, customer);
    await page.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}`);
    const boxes = page.locator('input[data-select-row]');
    const ticked = () => boxes.evaluateAll((list) => list.map((b) => (b as unknown as { checked: boolean }).checked));
    await boxes.nth(0).click();
    await boxes.nth(3).click({ modifiers: ['Shift'] });
    expect(await ticked()).toEqual([true, true, true, true, false, false]);
    expect(await page.textContent('[data-selected-count]')).toBe('Selected rows (4)');
    await boxes.nth(5).click({ modifiers: ['Shift'] });
    expect(await ticked()).toEqual([true, true, true, true, true, true]);
    expect(await page.isChecked('[data-select-all]')).toBe(true);
    // Upwards, and unticking: the range takes the state of the row clicked.
    await boxes.nth(4).click();
    await boxes.nth(1).click({ modifiers: ['Shift'] });
    expect(await ticked()).toEqual([true, false, false, false, false, true]);
    expect(await page.textContent('[data-selected-count]')).toBe('Selected rows (2)');
    // A plain click after that ticks one row only.
    await boxes.nth(2).click();
    expect(await ticked()).toEqual([true, false, true, false, false, true]);
  });

  it('keeps the bulk bar on screen at 390 px while the list scrolls, without hiding the last row', async () => {
    await page.setViewportSize(PHONE);
    const customer = 'Bulk Sticky Trafika';
    await many(25, customer);
    await page.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}&size=25`);
    const bar = () =>
      page.evaluate<{ top: number; bottom: number; position: string }>(`(() => {
        const bar = document.querySelector('[data-testid=bulk-form]');
        const r = bar.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, position: getComputedStyle(bar).position };
      })()`);
    for (const to of ['document.body.scrollHeight / 2', 'document.body.scrollHeight']) {
      await page.evaluate(`window.scrollTo(0, ${to})`);
      const b = await bar();
      expect(b.position).toBe('fixed');
      expect(b.bottom).toBeLessThanOrEqual(PHONE.height);
      expect(b.top).toBeGreaterThan(PHONE.height / 2);
    }
    // At the very bottom the last row sits above the bar, and its box takes a tap.
    const last = page.locator('input[data-select-row]').last();
    const rowBottom = await page.evaluate<number>(
      `[...document.querySelectorAll('[data-testid=license-row]')].pop().getBoundingClientRect().bottom`,
    );
    expect(rowBottom).toBeLessThanOrEqual((await bar()).top);
    await last.click();
    expect(await last.isChecked()).toBe(true);
    expect(await page.textContent('[data-selected-count]')).toBe('Selected rows (1)');
    const found = await problems(page, 'list with the bar at the bottom', PHONE.width);
    await screenshot(page, 'bulk-bar-sticky-phone', { viewport: true });
    expect(found).toEqual([]);
    // On a desktop the bar stays above the list.
    await page.setViewportSize(DESKTOP);
    expect((await bar()).position).toBe('static');
  });

  it.each(BOTH_WIDTHS)('suspends all licences matching a search with a reason kept in each audit entry (%s)', async (name, size) => {
    await page.setViewportSize(size);
    const customer = `Bulk Suspend Trafika ${name}`;
    const made = await many(30, customer);
    const other = await createLicense(t, { customer_name: `Bulk Suspend Elsewhere ${name}` });
    // 25 rows on the page: "All 30 matching" reaches past the page shown.
    await page.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}&size=25`);
    expect(await page.locator('[data-testid=license-row]').count()).toBe(25);
    await page.click('[data-testid=bulk-all]');
    expect(await page.textContent('label:has([data-testid=bulk-all])')).toContain('All 30 matching');
    await page.selectOption('[data-testid=bulk-action]', 'suspend');
    await page.click('[data-testid=bulk-continue]');
    await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
    expect(await page.textContent('h1')).toBe('Suspend 30 licences');
    expect(await page.textContent('[data-testid=bulk-confirm] > p >> nth=0')).toBe('Every licence matching the list’s filters: 30 now.');
    const reason = `Unpaid invoice 2026-11 (${name})`;
    await page.fill('#field-reason', reason);
    const found = await problems(page, `suspend confirmation ${name}`, size.width);
    await page.click('[data-testid=bulk-confirm-button]');
    await page.waitForURL(/\/licenses\/bulk\/\d+$/);
    expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 30 of 30');
    expect(await page.textContent('h1')).toBe(`Suspend: “${reason}”`);

    const ids = made.map((l) => l.id);
    const rows = await t.sql<{ active: boolean }>('SELECT active FROM licenses WHERE id = ANY($1::int[])', [ids]);
    expect(rows.map((r) => r.active)).toEqual(made.map(() => false));
    expect((await t.sql('SELECT active FROM licenses WHERE id = $1', [other.id]))[0].active).toBe(true);
    const audit = await t.sql<{ license_id: number; details: Record<string, unknown> }>(
      `SELECT license_id, details FROM audit_entries WHERE (details->>'bulk_operation')::int = $1 ORDER BY license_id`,
      [operationId(page.url())],
    );
    expect(audit.map((e) => e.license_id)).toEqual([...ids].sort((x, y) => x - y));
    for (const e of audit) expect(e.details).toMatchObject({ reason, changes: { active: { from: true, to: false } } });

    await page.goto(`${baseUrl}/licenses/bulk`);
    expect(await page.textContent('[data-testid=bulk-row] >> nth=0')).toContain(reason);
    found.push(...(await problems(page, `bulk operations ${name}`, size.width)));
    await screenshot(page, `bulk-operations-${name}`, { viewport: true });
    expect(found).toEqual([]);
  });

  it.each(BOTH_WIDTHS)(
    'renews 110 licences as a job: the page follows its progress to "Finished: 110 of 110" and lists the skipped one without a reload (%s)',
    async (name, size) => {
      await page.setViewportSize(size);
      const customer = `Bulk Job Mesara ${name}`;
      const made = await many(110, customer);
      // One has nothing to renew: skipped, and listed on the page once the job has finished (no reload).
      const perpetual = Math.min(...made.map((l) => l.id));
      await t.sql(`UPDATE licenses SET license_type = 'PERPETUAL', expires_at = NULL WHERE id = $1`, [perpetual]);
      const before = new Map(await Promise.all(made.map(async (l) => [l.id, await expiry(l.id)] as const)));
      await page.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}`);
      await page.click('[data-testid=bulk-all]');
      await page.selectOption('[data-testid=bulk-action]', 'renew');
      await page.click('[data-testid=bulk-continue]');
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await page.textContent('h1')).toBe('Renew 110 licences');
      expect(await page.textContent('main')).toContain('More than 100 licences: the change runs in the background');

      const documents: string[] = [];
      const polls: string[] = [];
      const track = (req: { resourceType: () => string; url: () => string }) => {
        if (req.resourceType() === 'document') documents.push(req.url());
        else if (req.url().endsWith('/progress')) polls.push(req.url());
      };
      // Another session holds the last licence's row (the job works in id order), so the page surely opens while
      // the job runs; it lets go once the page has fetched its progress at least once.
      const last = Math.max(...made.map((l) => l.id));
      const holder = new Client({ connectionString: t.config.databaseUrl });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT id FROM licenses WHERE id = $1 FOR UPDATE', [last]);
        await page.click('[data-testid=bulk-confirm-button]');
        await page.waitForURL(/\/licenses\/bulk\/\d+$/);
        page.on('request', track);
        const op = operationId(page.url());
        const progress = `${baseUrl}/licenses/bulk/${op}/progress`;
        expect(await page.textContent('[role=status].flash')).toContain('Renew: 110 licences are being processed.');
        expect(await page.textContent('[data-testid=bulk-progress] label')).toMatch(/^Working: \d+ of 110$/);
        expect(await page.isVisible('a:has-text("Refresh")')).toBe(true);
        await page.waitForSelector('[data-testid=bulk-progress] >> text="Working: 109 of 110"', { timeout: 30_000 });
        expect(polls.length).toBeGreaterThan(0);
        const found = await problems(page, `progress running ${name}`, size.width);
        await screenshot(page, `bulk-progress-running-${name}`, { viewport: true });
        await holder.query('COMMIT');

        await page.waitForSelector('[data-testid=bulk-progress] >> text="Finished: 110 of 110"', { timeout: 30_000 });
        expect(documents).toEqual([]);
        expect(polls.every((url) => url === progress)).toBe(true);
        expect(await page.textContent('[data-testid=bulk-counts]')).toBe('109 changed · 1 skipped');
        await page.waitForSelector('[data-testid=bulk-skipped]');
        expect(await page.textContent('[data-testid=bulk-skipped]')).toContain(
          'A PERPETUAL licence never expires: there is nothing to renew',
        );
        expect(await page.isVisible('a:has-text("Refresh")')).toBe(false);
        expect(documents).toEqual([]);
        expect(await page.getAttribute('[data-testid=bulk-progress] progress', 'value')).toBe('110');
        // Finished: the block no longer asks to be fetched again.
        expect(await page.locator('[data-poll]').count()).toBe(0);
        found.push(...(await problems(page, `progress finished ${name}`, size.width)));
        await screenshot(page, `bulk-progress-${name}`, { viewport: true });

        expect(await expiry(perpetual)).toBeNull();
        for (const l of made.filter((m) => m.id !== perpetual)) {
          const next = new Date(before.get(l.id) as number);
          next.setUTCMonth(next.getUTCMonth() + 12);
          expect(await expiry(l.id)).toBe(next.getTime());
        }
        const audit = await t.sql<{ entries: number; licences: number }>(
          `SELECT count(*)::int AS entries, count(DISTINCT license_id)::int AS licences FROM audit_entries WHERE (details->>'bulk_operation')::int = $1`,
          [op],
        );
        expect(audit[0]).toEqual({ entries: 109, licences: 109 });
        expect(found).toEqual([]);
      } finally {
        page.off('request', track);
        await holder.end();
      }
    },
    90_000,
  );

  it.each(BOTH_WIDTHS)('exports the ticked rows as a CSV holding exactly their keys (%s)', async (name, size) => {
    await page.setViewportSize(size);
    const customer = `Bulk Export Butik ${name}`;
    const [a, b, c] = await many(3, customer);
    await page.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}`);
    await page.click(rowBox(a.id));
    await page.click(rowBox(b.id));
    await page.selectOption('[data-testid=bulk-action]', 'export');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=bulk-continue]')]);
    expect(download.suggestedFilename()).toMatch(/^licenses-.*\.csv$/);
    const lines = readFileSync(await download.path(), 'utf8')
      .trim()
      .split(/\r?\n/);
    const column = lines[0].split(',').indexOf('license_key');
    expect(column).toBeGreaterThanOrEqual(0);
    const keys = lines.slice(1).map((line) => line.split(',')[column]);
    expect(keys.sort()).toEqual([a.license_key, b.license_key].sort());
    expect(keys).not.toContain(c.license_key);
    // Nothing navigated away: the list is still there with its ticks.
    expect(await page.isChecked(rowBox(a.id))).toBe(true);
  });

  it.each(BOTH_WIDTHS)('works without JavaScript: rows ticked by hand, extended, the "This page" box hidden (%s)', async (name, size) => {
    // Without JavaScript, page.evaluate (and so axe) cannot run: the same pages pass axe in the tests above.
    const plain = await browser.newContext({ viewport: size, javaScriptEnabled: false, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
    try {
      const p = await plain.newPage();
      const errors = collectConsoleErrors(p);
      await signIn(p, baseUrl);
      const customer = `Bulk Plain Kiosk ${name}`;
      const [a, b] = await many(2, customer);
      const before = { a: await expiry(a.id), b: await expiry(b.id) };
      await p.goto(`${baseUrl}/licenses?q=${encodeURIComponent(customer)}`);
      expect(await p.isVisible('[data-select-page]')).toBe(false);
      expect(await p.textContent('[data-selected-count]')).toBe('Selected rows');
      await p.click(rowBox(b.id));
      await p.selectOption('[data-testid=bulk-action]', 'extend');
      await p.click('[data-testid=bulk-continue]');
      await p.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await p.textContent('h1')).toBe('Extend 1 licence');
      // The quick picks are submit buttons: without a script the page comes back with the days and the new date.
      expect(await p.inputValue('#field-days')).toBe('');
      await p.click('[data-testid=bulk-preset] >> text="7 days"');
      await p.waitForSelector('[data-testid=bulk-preset][aria-pressed=true]');
      expect(await p.inputValue('#field-days')).toBe('7');
      expect(await p.getAttribute('[data-testid=bulk-preview-after] time', 'datetime')).toBe(
        new Date(Number(before.b) + 7 * DAY).toISOString(),
      );
      await p.fill('#field-days', '12');
      await p.click('[data-testid=bulk-confirm-button]');
      await p.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await p.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 1 of 1');
      expect(await expiry(b.id)).toBe(Number(before.b) + 12 * DAY);
      expect(await expiry(a.id)).toBe(before.a);
      expect(errors).toEqual([]);
    } finally {
      await plain.close();
    }
  });

  it('raised no Content-Security-Policy violations or script errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
