import { readFileSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { createLicense, fingerprint, insertSeat, setLicenseExpiry } from '../support/factories';
import { startSmtpServer } from '../support/smtp-server';
import type { TestApp } from '../support/test-app';
import { BulkLicensesService } from '../../src/licenses/bulk/bulk-licenses.service';
import {
  BOTH_WIDTHS,
  collectConsoleErrors,
  dashboardDocTable,
  DESKTOP,
  expectFocusAfterLoad,
  PHONE,
  screenshot,
  seriousViolations,
  signIn,
  startDashboard,
  TICKETS,
} from './browser';

/** axe-core's `landmark-unique` findings (moderate, so not in seriousViolations): two landmarks with one name. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
async function landmarkUnique(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate<string[]>(
    `axe.run(document, { runOnly: ['landmark-unique'] }).then((r) => r.violations.flatMap((v) => v.nodes.map((n) => n.target.join(' '))))`,
  );
}

/** The tickets the palette serves: all but the portal's (the customer's pages have no palette; tasks.browser-spec.ts counts its taps). */
type Ticket = Exclude<keyof typeof TICKETS, 'portalFree'>;

/** The chords and the phone taps documented in docs/dashboard.md (Key chords per task), by ticket ('-': not by keys). */
function documentedCounts(): Map<string, { chords?: number; taps?: number }> {
  const number = (cell: string) => (/^\d+$/.test(cell) ? Number(cell) : undefined);
  return new Map(
    dashboardDocTable('Key chords per task').map(([task, , chords, taps]) => [task, { chords: number(chords), taps: number(taps) }]),
  );
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
  const documented = documentedCounts();

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

  it('documents every ticket of Clicks per task with its chords and phone taps (the portal aside), each at most 3', () => {
    const clicks = new Map(
      dashboardDocTable('Clicks per task').map(([task, desktop, phone]) => [task, { desktop: Number(desktop), phone: Number(phone) }]),
    );
    expect([...clicks.keys()].sort()).toEqual(Object.values(TICKETS).sort());
    expect([...documented.keys()].sort()).toEqual(
      Object.values(TICKETS)
        .filter((task) => task !== TICKETS.portalFree)
        .sort(),
    );
    // Every ticket, the portal's too, by the fewer of its ways: clicks or chords at 1280, clicks or taps at 390.
    for (const task of Object.values(TICKETS)) {
      const fewest = {
        desktop: Math.min(documented.get(task)?.chords ?? Infinity, clicks.get(task)?.desktop ?? Infinity),
        phone: Math.min(documented.get(task)?.taps ?? Infinity, clicks.get(task)?.phone ?? Infinity),
      };
      expect({ task, atMostThree: fewest.desktop <= 3 && fewest.phone <= 3 }).toEqual({ task, atMostThree: true });
    }
  });

  const activate = (license_key: string, machine: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key, machine_fingerprint: fingerprint(machine), hostname: machine });

  const expiry = async (id: number) => Date.parse((await t.admin.get(`/api/v1/admin/licenses/${id}`).expect(200)).body.expires_at);
  /** A customer with 24 licences: 20 expire within 30 days, 4 later; with each one's expiry before. */
  const rangeCustomer = async (name: string) => {
    const made: { id: number }[] = [];
    for (let i = 0; i < 24; i += 8)
      made.push(...(await Promise.all(Array.from({ length: 8 }, () => createLicense(t, { customer_name: name })))));
    for (const [i, l] of made.entries()) await setLicenseExpiry(t, l.id, new Date(Date.now() + (i < 20 ? 10 + i : 200) * 86_400_000));
    const before = async (list: typeof made) => new Map(await Promise.all(list.map(async (l) => [l.id, await expiry(l.id)] as const)));
    return { soon: await before(made.slice(0, 20)), later: await before(made.slice(20)) };
  };
  /** The 20 moved 30 days later, the 4 untouched. */
  const expectExtended = async (soon: Map<number, number>, later: Map<number, number>) => {
    for (const [id, was] of soon) expect(await expiry(id)).toBe(was + 30 * 86_400_000);
    for (const [id, was] of later) expect(await expiry(id)).toBe(was);
  };

  /**
   * A signed-in page at this size for the tests of a describe block, each from the statistics page with its count (chords
   * or taps) back at 0; what axe-core and the console found there fails the block at its end.
   */
  const signedInAt = (viewport: { width: number; height: number }) => {
    const session = { page: undefined as unknown as Page, count: 0, problems: [] as string[], consoleErrors: [] as string[] };
    beforeAll(async () => {
      const context = await browser.newContext({ viewport, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      session.page = await context.newPage();
      session.consoleErrors = collectConsoleErrors(session.page);
      await signIn(session.page, baseUrl);
    }, 60_000);
    beforeEach(async () => {
      await session.page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
    });
    afterAll(() => expect([...session.problems, ...session.consoleErrors]).toEqual([]));
    return session;
  };

  describe('keyboard only at 1280x800', () => {
    const session = signedInAt(DESKTOP);
    let page: Page;
    beforeAll(() => (page = session.page));
    const press = async (key: string) => {
      session.count++;
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
      session.problems.push(...(await seriousViolations(page)).map((v) => `${label}: ${v}`));
      session.problems.push(...(await landmarkUnique(page)).map((v) => `${label}: landmark-unique ${v}`));
    };
    const expectChords = (ticket: Ticket) =>
      expect({ task: TICKETS[ticket], chords: session.count }).toEqual({
        task: TICKETS[ticket],
        chords: documented.get(TICKETS[ticket])?.chords,
      });

    it('"my key stopped working on my new laptop": the palette finds the licence and opens the release, Enter confirms', async () => {
      const lic = await createLicense(t, { customer_name: 'Knjižara Ćirić Kraljevo', limits: { max_installations: 1 } });
      await activate(lic.license_key, 'old-laptop-k').expect(200);
      await activate(lic.license_key, 'new-laptop-k').expect(400);
      await palette('ciric kraljevo release');
      await page.waitForURL(/\/confirm\/release\?/);
      // The confirmation focuses its first field; Ctrl+Enter confirms from it.
      await expectFocusAfterLoad(page, 'document.activeElement?.id', 'field-reason');
      await check('release confirmation');
      await press('Control+Enter');
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      // After the action the focus is on its message.
      await expectFocusAfterLoad(page, 'document.activeElement?.getAttribute("data-flash")', '');
      expect(await page.textContent('[data-flash]')).toMatch(/released/i);
      await activate(lic.license_key, 'new-laptop-k').expect(200);
      expectChords('newLaptop');
      await check('licence page after the release');
    });

    it('sends the key again from the palette', async () => {
      const email = 'mika@pekara-kbd.example';
      const lic = await createLicense(t, { customer_name: 'Pekara Mika Kbd', customer_email: email });
      await palette(`${lic.license_key} send`);
      await page.waitForSelector('[data-flash]');
      expect(await page.textContent('[data-flash]')).toContain(`The key is on its way to ${email}.`);
      await smtp.waitFor(1, (m) => m.envelopeTo.includes(email));
      expectChords('sendKey');
    });

    it('renews with the licence page key and suspends with a reason from the palette', async () => {
      const lic = await createLicense(t, { license_type: 'YEARLY', customer_name: 'Kbd Renew' });
      await palette(`${lic.license_key} renew`);
      await page.waitForSelector('[data-flash]');
      expect(await page.textContent('[data-flash]')).toContain('Licence renewed until');
      expectChords('renew');
      session.count = 0;
      await page.goto(`${baseUrl}/dashboard`);
      await palette(`${lic.license_key} suspend`);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}/confirm/suspend`);
      await page.keyboard.type('Unpaid invoice (keyboard)');
      await press('Control+Enter');
      await page.waitForSelector('[data-flash]');
      expect((await t.admin.get(`/api/v1/admin/licenses/${lic.id}`).expect(200)).body.status).toBe('suspended');
      expectChords('suspend');
    });

    it("extends all of a customer's licences by 30 days: the Days field has the focus and starts empty", async () => {
      const made = await Promise.all([1, 2, 3].map(() => createLicense(t, { customer_name: 'Kbd Bulk Pekara' })));
      const before = await Promise.all(
        made.map(async (l) => Date.parse((await t.admin.get(`/api/v1/admin/licenses/${l.id}`)).body.expires_at)),
      );
      await palette('Kbd Bulk Pekara extend');
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      await expectFocusAfterLoad(page, 'document.activeElement?.id', 'field-days');
      expect(await page.inputValue('#field-days')).toBe('');
      await check('bulk confirmation');
      await page.keyboard.type('30');
      await press('Control+Enter');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 3 of 3');
      for (const [i, l] of made.entries())
        expect(Date.parse((await t.admin.get(`/api/v1/admin/licenses/${l.id}`)).body.expires_at)).toBe(before[i] + 30 * 86_400_000);
      expectChords('bulkExtend');

      // Undo: the palette's "Undo the last bulk change…" opens its confirmation with the button focused.
      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      await palette('undo');
      await page.waitForURL(/\/licenses\/bulk\/\d+\/undo$/);
      await expectFocusAfterLoad(page, 'document.activeElement?.getAttribute("data-testid")', 'bulk-undo-confirm');
      await press('Enter');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[data-testid=bulk-undo-of]')).toContain('bulk operation');
      for (const [i, l] of made.entries())
        expect(Date.parse((await t.admin.get(`/api/v1/admin/licenses/${l.id}`)).body.expires_at)).toBe(before[i]);
      expectChords('bulkUndo');
    });

    it('adds a note about a customer: the palette opens the page with the note field focused', async () => {
      const email = 'racuni@kbd-lipa.example';
      await createLicense(t, { customer_name: 'Apoteka Kbd', customer_email: email });
      await palette(`${email} note`);
      await page.waitForURL(/\/licenses\/customer\?email=/);
      await expectFocusAfterLoad(page, 'document.activeElement?.id', 'field-note');
      await page.keyboard.type('Calls before noon (keyboard).');
      await press('Control+Enter');
      await page.waitForURL(/#notes$/);
      expect(await t.sql(`SELECT body FROM customer_notes WHERE customer = $1`, [`email:${email}`])).toEqual([
        { body: 'Calls before noon (keyboard).' },
      ]);
      expectChords('note');
      await check('customer page');
    });

    it("extends the 20 of a customer's 24 licences that expire within 30 days: filter words and the days in the palette", async () => {
      const { soon, later } = await rangeCustomer('Kbd Range Pekara');
      await palette('Kbd Range Pekara expiring extend 30');
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await page.textContent('h1')).toBe('Extend 20 licences');
      expect(await page.inputValue('#field-days')).toBe('30');
      expect(await page.locator('[data-testid=bulk-preview-after] time').count()).toBe(10);
      await expectFocusAfterLoad(page, 'document.activeElement?.id', 'field-days');
      await check('bulk confirmation from the palette');
      await press('Control+Enter');
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 20 of 20');
      await expectExtended(soon, later);
      expectChords('bulkRange');
    });

    it("reaches a customer's machines, the expiring licences and a refusal's reason in 2 chords", async () => {
      const email = 'it@kbd-zeljo.example';
      const lic = await createLicense(t, { customer_name: 'Kbd Željo', customer_email: email, limits: { max_installations: 1 } });
      const other = await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Kbd Željo', customer_email: email });
      await insertSeat(t, lic.id, { hostname: 'kbd-kasa-1' });
      await insertSeat(t, other.id, { hostname: 'kbd-office' });
      await press('/');
      await page.keyboard.type(email);
      await press('Enter');
      await page.waitForURL(/\/licenses\/customer\?email=/);
      const machines = (await page.locator('[data-testid=customer-machine]').allTextContents()).join('\n');
      for (const host of ['kbd-kasa-1', 'kbd-office']) expect(machines).toContain(host);
      expectChords('machines');

      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      await palette('expiring');
      await page.waitForURL(/\/licenses\?expiring=30/);
      expectChords('expiring');

      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      expect((await activate(lic.license_key, 'kbd-kasa-2').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
      await palette(lic.license_key);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      expect(await page.textContent('[data-testid=refused-code]')).toBe('ALREADY_ACTIVATED');
      expectChords('refused');
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

  describe('every ticket by the palette at 390x844, counted in taps', () => {
    const session = signedInAt(PHONE);
    let page: Page;
    beforeAll(() => (page = session.page));
    /** A tap on something the phone shows, counted. */
    const tap = async (target: Locator) => {
      expect(await target.isVisible()).toBe(true);
      session.count++;
      await target.click();
    };
    /** Commands in the top bar (a tap, the cursor in the box), the words typed (text), a tap on the command named. */
    const palette = async (words: string, command: RegExp, shot?: string) => {
      await tap(page.locator('[data-palette-open]'));
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('palette-q');
      await page.keyboard.type(words);
      const item = page.locator('[data-testid=palette-item]', { hasText: command }).first();
      await item.waitFor();
      // A long command ("… · expiring in 30 days · 30 days") wraps in the dialog: the page never scrolls sideways.
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) session.problems.push(`the palette with “${words}”: scrolls ${overflow}px sideways`);
      if (shot) await screenshot(page, shot, { viewport: true });
      await tap(item);
    };
    const check = async (label: string) => {
      session.problems.push(...(await seriousViolations(page)).map((v) => `${label}: ${v}`));
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) session.problems.push(`${label}: scrolls ${overflow}px sideways`);
    };
    const expectTaps = (ticket: Ticket) =>
      expect({ task: TICKETS[ticket], taps: session.count }).toEqual({
        task: TICKETS[ticket],
        taps: documented.get(TICKETS[ticket])?.taps,
      });
    const flash = () => page.textContent('[data-flash]');

    it('"my key stopped working on my new laptop": the release command, then Release', async () => {
      const lic = await createLicense(t, { customer_name: 'Knjižara Ćirić Čačak', limits: { max_installations: 1 } });
      await activate(lic.license_key, 'old-laptop-p').expect(200);
      await activate(lic.license_key, 'new-laptop-p').expect(400);
      await palette('ciric cacak release', /Release the machine/);
      await page.waitForURL(/\/confirm\/release\?/);
      expect(await page.textContent('[data-testid=confirm]')).toContain('old-laptop-p');
      await tap(page.locator('[data-testid=confirm-button]'));
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      expect(await flash()).toMatch(/released/i);
      await activate(lic.license_key, 'new-laptop-p').expect(200);
      expectTaps('newLaptop');
    });

    it('renews and sends the key again: the command does it', async () => {
      const email = 'mika@pekara-tap.example';
      const lic = await createLicense(t, { license_type: 'YEARLY', customer_name: 'Pekara Mika Tap', customer_email: email });
      await palette(`${lic.license_key} renew`, /^Renew/);
      await page.waitForSelector('[data-flash]');
      expect(await flash()).toContain('Licence renewed until');
      expectTaps('renew');
      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      await palette(`${lic.license_key} send`, /^Send the key again/);
      await page.waitForSelector('[data-flash]');
      expect(await flash()).toContain(`The key is on its way to ${email}.`);
      await smtp.waitFor(1, (m) => m.envelopeTo.includes(email));
      expectTaps('sendKey');
    });

    it('suspends with the reason typed after the verb: the confirmation opens with it filled in', async () => {
      const lic = await createLicense(t, { customer_name: 'Tap Suspend' });
      const reason = 'Unpaid invoice (phone)';
      await palette(`${lic.license_key} suspend ${reason}`, /^Suspend/);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}/confirm/suspend`);
      expect(await page.inputValue('#field-reason')).toBe(reason);
      await check('suspend confirmation with the reason');
      await tap(page.locator('[data-testid=confirm-button]'));
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      expect((await t.admin.get(`/api/v1/admin/licenses/${lic.id}`).expect(200)).body.status).toBe('suspended');
      const [entry] = await t.sql<{ details: { reason?: string } }>(
        `SELECT details FROM audit_entries WHERE license_id = $1 AND action = 'license.updated' ORDER BY id DESC LIMIT 1`,
        [lic.id],
      );
      expect(entry.details.reason).toBe(reason);
      expectTaps('suspend');
    });

    it("opens a customer's machines, adds a note typed after the verb", async () => {
      const email = 'racuni@tap-lipa.example';
      const lic = await createLicense(t, { customer_name: 'Apoteka Tap', customer_email: email });
      const other = await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Apoteka Tap', customer_email: email });
      await insertSeat(t, lic.id, { hostname: 'tap-kasa-1' });
      await insertSeat(t, other.id, { hostname: 'tap-office' });
      await palette(email, /^Customer · /);
      await page.waitForURL(/\/licenses\/customer\?email=/);
      expect(await page.locator('[data-testid=customer-machine]').count()).toBe(2);
      expectTaps('machines');
      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      const note = 'Calls before noon (phone).';
      await palette(`${email} note ${note}`, /^Add a note about/);
      await page.waitForURL(/\/licenses\/customer\?email=/);
      expect(await page.inputValue('#field-note')).toBe(note);
      await tap(page.getByRole('button', { name: 'Add note' }));
      await page.waitForURL(/#notes$/);
      expect(await t.sql(`SELECT body FROM customer_notes WHERE customer = $1`, [`email:${email}`])).toEqual([{ body: note }]);
      expectTaps('note');
      await check('customer page with the note');
    });

    it('opens the expiring licences, a saved view and a refused licence', async () => {
      await palette('expiring', /Licences expiring in the next 30 days/);
      await page.waitForURL(/\/licenses\?expiring=30/);
      expectTaps('expiring');

      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      await t.sql(
        `INSERT INTO saved_views (name, query, author) VALUES ('Tap: suspended', 'status=suspended', 'admin') ON CONFLICT DO NOTHING`,
      );
      await palette('licences', /^Page · Licences$/);
      await page.waitForURL(`${baseUrl}/licenses`);
      await tap(page.getByRole('link', { name: 'Tap: suspended' }));
      await page.waitForURL(/status=suspended/);
      expectTaps('savedView');

      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      const lic = await createLicense(t, { customer_name: 'Foto Studio Tap' });
      await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ active: false }).expect(200);
      expect((await activate(lic.license_key, 'tap-studio').expect(400)).body.error.code).toBe('KEY_SUSPENDED');
      await palette('Foto Studio Tap', /^Licence · /);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      expect(await page.textContent('[data-testid=refused-code]')).toBe('KEY_SUSPENDED');
      expectTaps('refused');
      await check('licence page with the refusal');
    });

    it("extends all of a customer's licences, then 20 of 24, with the days after the verb; undoes from the palette", async () => {
      const made = await Promise.all([1, 2, 3].map(() => createLicense(t, { customer_name: 'Tap Bulk Pekara' })));
      const before = await Promise.all(made.map((l) => expiry(l.id)));
      await palette('Tap Bulk Pekara extend 30', /^Extend by 30 days every licence matching · “Tap Bulk Pekara”$/);
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await page.inputValue('#field-days')).toBe('30');
      await check('bulk confirmation with the days');
      await tap(page.locator('[data-testid=bulk-confirm-button]'));
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 3 of 3');
      for (const [i, l] of made.entries()) expect(await expiry(l.id)).toBe(before[i] + 30 * 86_400_000);
      expectTaps('bulkExtend');

      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      const { soon, later } = await rangeCustomer('Tap Range Pekara');
      await palette(
        'Tap Range Pekara expiring extend 30d',
        /^Extend by 30 days every licence matching · “Tap Range Pekara” · expiring in 30 days$/,
        'palette-extend-phone',
      );
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await page.textContent('h1')).toBe('Extend 20 licences');
      await tap(page.locator('[data-testid=bulk-confirm-button]'));
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 20 of 20');
      await expectExtended(soon, later);
      expectTaps('bulkRange');

      await page.goto(`${baseUrl}/dashboard`);
      session.count = 0;
      const undone = await Promise.all([1, 2].map(() => createLicense(t, { customer_name: 'Tap Undo Pekara' })));
      const was = await Promise.all(undone.map((l) => expiry(l.id)));
      await t.app
        .get(BulkLicensesService)
        .start({ action: 'extend', days: 30 }, { ids: undone.map((l) => l.id) }, { type: 'dashboard', name: 'admin', ip: '127.0.0.1' });
      await palette('undo', /Undo the last bulk change/);
      await page.waitForURL(/\/licenses\/bulk\/\d+\/undo$/);
      await tap(page.locator('[data-testid=bulk-undo-confirm]'));
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);
      for (const [i, l] of undone.entries()) expect(await expiry(l.id)).toBe(was[i]);
      expectTaps('bulkUndo');
      await check('undo operation page');
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
