import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { join } from 'node:path';
import { createLicense, fingerprint } from '../support/factories';
import { startSmtpServer } from '../support/smtp-server';
import type { TestApp } from '../support/test-app';
import { BOTH_WIDTHS, collectConsoleErrors, DESKTOP, screenshot, seriousViolations, signIn, startDashboard } from './browser';

/** axe-core's `landmark-unique` findings (moderate, so not in seriousViolations): two landmarks with one name. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
async function landmarkUnique(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate<string[]>(
    `axe.run(document, { runOnly: ['landmark-unique'] }).then((r) => r.violations.flatMap((v) => v.nodes.map((n) => n.target.join(' '))))`,
  );
}

/** The key chords documented in docs/dashboard.md (Key chords per task), by task: the spec measures each and compares. */
function documentedChords(): Map<string, number> {
  const docs = readFileSync(join(__dirname, '..', '..', 'docs', 'dashboard.md'), 'utf8');
  const section = /^## Key chords per task\n([\s\S]*?)(?=^## )/m.exec(docs)?.[1] ?? '';
  const rows = new Map<string, number>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length >= 5 && /^\d+$/.test(cells[3])) rows.set(cells[1], Number(cells[3]));
  }
  return rows;
}

/**
 * The command palette and the keyboard (docs/dashboard.md, Command palette): every task driven by keys alone and counted
 * in chords (a key press that is not text typed into a field), from the statistics page; the palette at both widths.
 */
describe('the command palette and keyboard-only tasks', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  const documented = documentedChords();

  beforeAll(async () => {
    smtp = await startSmtpServer();
    ({ t, browser, baseUrl } = await startDashboard({
      mail: { smtpUrl: smtp.url, from: 'keys@vendor.example', brandName: 'Vendor Soft', disabledKinds: [], retryScheduleSeconds: [1] },
    }));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  const activate = (license_key: string, machine: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key, machine_fingerprint: fingerprint(machine), hostname: machine });

  describe('keyboard only at 1280x800', () => {
    let page: Page;
    let chords = 0;
    const problems: string[] = [];
    let consoleErrors: string[];
    beforeAll(async () => {
      const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      page = await context.newPage();
      consoleErrors = collectConsoleErrors(page);
      await signIn(page, baseUrl);
    }, 60_000);
    beforeEach(async () => {
      await page.goto(`${baseUrl}/dashboard`);
      chords = 0;
    });
    afterAll(() => expect([...problems, ...consoleErrors]).toEqual([]));
    const press = async (key: string) => {
      chords++;
      await page.keyboard.press(key);
    };
    /** Ctrl+K, the words typed (not counted: text), Enter. */
    const palette = async (words: string) => {
      await press('Control+k');
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('palette-q');
      await page.keyboard.type(words);
      await press('Enter');
    };
    const check = async (label: string) => {
      problems.push(...(await seriousViolations(page)).map((v) => `${label}: ${v}`));
      problems.push(...(await landmarkUnique(page)).map((v) => `${label}: landmark-unique ${v}`));
    };
    const expectChords = (task: string) => expect({ task, chords }).toEqual({ task, chords: documented.get(task) });

    it('"my key stopped working on my new laptop": the palette finds the licence and opens the release, Enter confirms', async () => {
      const lic = await createLicense(t, { customer_name: 'Knjižara Ćirić Kraljevo', limits: { max_installations: 1 } });
      await activate(lic.license_key, 'old-laptop-k').expect(200);
      await activate(lic.license_key, 'new-laptop-k').expect(400);
      await palette('ciric kraljevo release');
      await page.waitForURL(/\/confirm\/release\?/);
      // The confirmation focuses its first field; Ctrl+Enter confirms from it.
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('field-reason');
      await check('release confirmation');
      await press('Control+Enter');
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      // After the action the focus is on its message.
      expect(await page.evaluate<string | null>('document.activeElement?.getAttribute("data-flash")')).toBe('');
      expect(await page.textContent('[data-flash]')).toMatch(/released/i);
      await activate(lic.license_key, 'new-laptop-k').expect(200);
      expectChords('"My key stopped working on my new laptop"');
      await check('licence page after the release');
    });

    it('sends the key again from the palette', async () => {
      const email = 'mika@pekara-kbd.example';
      const lic = await createLicense(t, { customer_name: 'Pekara Mika Kbd', customer_email: email });
      await palette(`${lic.license_key} send`);
      await page.waitForSelector('[data-flash]');
      expect(await page.textContent('[data-flash]')).toContain(`The key is on its way to ${email}.`);
      await smtp.waitFor(1, (m) => m.envelopeTo.includes(email));
      expectChords('Send the key to the customer again');
    });

    it('renews with the licence page key and suspends with a reason from the palette', async () => {
      const lic = await createLicense(t, { license_type: 'YEARLY', customer_name: 'Kbd Renew' });
      await palette(`${lic.license_key} renew`);
      await page.waitForSelector('[data-flash]');
      expect(await page.textContent('[data-flash]')).toContain('Licence renewed until');
      expectChords('Renew a licence found by its key');
      chords = 0;
      await page.goto(`${baseUrl}/dashboard`);
      await palette(`${lic.license_key} suspend`);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}/confirm/suspend`);
      await page.keyboard.type('Unpaid invoice (keyboard)');
      await press('Control+Enter');
      await page.waitForSelector('[data-flash]');
      expect((await t.admin.get(`/api/v1/admin/licenses/${lic.id}`).expect(200)).body.status).toBe('suspended');
      expectChords('Suspend a licence with a reason');
    });

    it("extends all of a customer's licences by 30 days: the Days field has the focus and starts empty", async () => {
      const made = await Promise.all([1, 2, 3].map(() => createLicense(t, { customer_name: 'Kbd Bulk Pekara' })));
      const before = await Promise.all(
        made.map(async (l) => Date.parse((await t.admin.get(`/api/v1/admin/licenses/${l.id}`)).body.expires_at)),
      );
      await palette('Kbd Bulk Pekara extend');
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('field-days');
      expect(await page.inputValue('#field-days')).toBe('');
      await check('bulk confirmation');
      await page.keyboard.type('30');
      await press('Control+Enter');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 3 of 3');
      for (const [i, l] of made.entries())
        expect(Date.parse((await t.admin.get(`/api/v1/admin/licenses/${l.id}`)).body.expires_at)).toBe(before[i] + 30 * 86_400_000);
      expectChords("Extend all of one customer's licences by 30 days");

      // Undo: the palette's "Undo the last bulk change…" opens its confirmation with the button focused.
      await page.goto(`${baseUrl}/dashboard`);
      chords = 0;
      await palette('undo');
      await page.waitForURL(/\/licenses\/bulk\/\d+\/undo$/);
      expect(await page.evaluate<string | null>('document.activeElement?.getAttribute("data-testid")')).toBe('bulk-undo-confirm');
      await press('Enter');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[data-testid=bulk-undo-of]')).toContain('bulk operation');
      for (const [i, l] of made.entries())
        expect(Date.parse((await t.admin.get(`/api/v1/admin/licenses/${l.id}`)).body.expires_at)).toBe(before[i]);
      expectChords('Undo a bulk extend');
    });

    it('adds a note about a customer: the palette opens the page with the note field focused', async () => {
      const email = 'racuni@kbd-lipa.example';
      await createLicense(t, { customer_name: 'Apoteka Kbd', customer_email: email });
      await palette(`${email} note`);
      await page.waitForURL(/\/licenses\/customer\?email=/);
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('field-note');
      await page.keyboard.type('Calls before noon (keyboard).');
      await press('Control+Enter');
      await page.waitForURL(/#notes$/);
      expect(await t.sql(`SELECT body FROM customer_notes WHERE customer = $1`, [`email:${email}`])).toEqual([
        { body: 'Calls before noon (keyboard).' },
      ]);
      expectChords('Add a note about a customer');
      await check('customer page');
    });

    it('lists the shortcuts with ? (the licence page keys included) and goes to pages from the palette', async () => {
      await press('?');
      const keys = await page.locator('#shortcuts kbd').allTextContents();
      for (const key of ['Ctrl', 'K', 'r', 'n', 'k', 's', 'e', 'c']) expect(keys).toContain(key);
      await press('Escape');
      await palette('audit');
      await page.waitForURL(`${baseUrl}/audit`);
    });
  });

  describe.each(BOTH_WIDTHS)('the palette at %s', (width, viewport) => {
    it('opens from the top bar, finds a licence and a customer, offers the pages and this page’s actions, passes axe', async () => {
      const context = await browser.newContext({ viewport, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      const page = await context.newPage();
      const errors = collectConsoleErrors(page);
      await signIn(page, baseUrl);
      const lic = await createLicense(t, { customer_name: `Palette Kupac ${width}`, customer_email: `kupac.${width}@palette.example` });
      await page.goto(`${baseUrl}/licenses/${lic.id}`);
      await page.click('[data-palette-open]');
      expect(await page.isVisible('#palette')).toBe(true);
      const labels = () => page.locator('[data-testid=palette-item]').allTextContents();
      expect((await labels()).join('\n')).toContain('Send the key again');
      expect((await labels()).join('\n')).toContain('Statistics');
      await page.keyboard.type(`palette kupac ${width}`);
      const customerItem = page.locator('[data-testid=palette-item]', { hasText: /^Customer · / }).first();
      await customerItem.waitFor();
      expect((await labels()).join('\n')).toContain(lic.license_key);
      await screenshot(page, `palette-${width}`, { viewport: true });
      const problems = [...(await seriousViolations(page)), ...(await landmarkUnique(page))];
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) problems.push(`scrolls ${overflow}px sideways`);
      await customerItem.click();
      await page.waitForURL(/\/licenses\/customer\?email=/);
      problems.push(...(await landmarkUnique(page)), ...errors);
      expect(problems).toEqual([]);
      await context.close();
    });
  });
});
