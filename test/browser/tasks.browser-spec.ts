import type { Browser, Locator, Page } from 'playwright-core';
import { createLicense, fingerprint, insertSeat, setLicenseExpiry } from '../support/factories';
import { startSmtpServer } from '../support/smtp-server';
import type { TestApp } from '../support/test-app';
import { BulkLicensesService } from '../../src/licenses/bulk/bulk-licenses.service';
import {
  BOTH_WIDTHS,
  collectConsoleErrors,
  dashboardDocTable,
  screenshot,
  seriousViolations,
  signIn,
  startDashboard,
  TICKETS,
} from './browser';

type Width = (typeof BOTH_WIDTHS)[number][0];

/**
 * The documented clicks of each task, read from docs/dashboard.md (Clicks per task): the table's first cell names the
 * task, then the desktop and the phone clicks. The spec measures each task and compares, so the table cannot drift.
 */
function documentedClicks(): Map<string, Record<Width, number>> {
  const rows = new Map<string, Record<Width, number>>();
  for (const [task, desktop, phone] of dashboardDocTable('Clicks per task'))
    if (/^\d+$/.test(desktop) && /^\d+$/.test(phone)) rows.set(task, { desktop: Number(desktop), phone: Number(phone) });
  return rows;
}

const TASKS = TICKETS;

/**
 * Staff tasks in Chromium, counted in clicks (docs/dashboard.md, Clicks per task): only real gestures (typing, Enter,
 * clicks on visible elements), each click counted; every task reads its outcome back and ends on a page axe-core passes.
 */
describe('staff tasks in Chromium, counted in clicks, at 1280 and 390 px', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  const documented = documentedClicks();

  beforeAll(async () => {
    smtp = await startSmtpServer();
    ({ t, browser, baseUrl } = await startDashboard({
      mail: { smtpUrl: smtp.url, from: 'keys@vendor.example', brandName: 'Vendor Soft', disabledKinds: [], retryScheduleSeconds: [1] },
      portal: { enabled: true, loginLimit: 20, storePortalUrls: {} },
    }));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it('documents every task measured here, with a number per width', () => {
    expect([...documented.keys()].sort()).toEqual(Object.values(TASKS).sort());
  });

  describe.each(BOTH_WIDTHS)('%s', (width, viewport) => {
    let page: Page;
    let consoleErrors: string[];
    let clicks = 0;
    const phone = width === 'phone';

    beforeAll(async () => {
      const context = await browser.newContext({ viewport, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      page = await context.newPage();
      consoleErrors = collectConsoleErrors(page);
      await signIn(page, baseUrl);
    }, 60_000);
    beforeEach(() => {
      clicks = 0;
    });

    /** A tap or a click on something the staff member sees, counted. */
    const click = async (target: Locator): Promise<void> => {
      expect(await target.isVisible()).toBe(true);
      clicks++;
      await target.click();
    };
    /** The top bar's box: `/` on a desktop (a keystroke), the Menu button on a phone (a tap, and the cursor waits in the box). */
    const search = async (text: string): Promise<void> => {
      if (phone) {
        expect(await page.isVisible('#topbar-q')).toBe(false);
        await click(page.locator('[data-menu-toggle]'));
      } else await page.keyboard.press('/');
      expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('topbar-q');
      await page.keyboard.type(text);
      await page.keyboard.press('Enter');
    };
    /** Axe-core, sideways scroll and the CSP on the page a task ends on (docs/dashboard.md, Tables). */
    const pageProblems = async (label: string): Promise<string[]> => {
      const found = (await seriousViolations(page)).map((v) => `${label}: ${v}`);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) found.push(`${label}: scrolls ${overflow}px sideways`);
      return [...found, ...consoleErrors.splice(0).map((e) => `${label}: ${e}`)];
    };
    const expectClicks = (task: keyof typeof TASKS) =>
      expect({ task: TASKS[task], clicks }).toEqual({ task: TASKS[task], clicks: documented.get(TASKS[task])?.[width] });
    const activate = (license_key: string, machine: string) =>
      t
        .http()
        .post('/api/v1/activate')
        .send({ license_key, machine_fingerprint: fingerprint(`${width}-${machine}`), hostname: machine });
    const adminLicense = async (id: number) =>
      (await t.admin.get(`/api/v1/admin/licenses/${id}`).expect(200)).body as Record<string, unknown>;
    const start = () => page.goto(`${baseUrl}/dashboard`);
    /** The "30 days" quick pick on the confirmation: the same page again with the days filled in and the new dates. */
    const pickThirtyDays = async (): Promise<void> => {
      await click(page.getByRole('button', { name: '30 days', exact: true }));
      await page.waitForSelector('[data-testid=bulk-preset][aria-pressed=true]');
      expect(await page.inputValue('#field-days')).toBe('30');
      expect(await page.locator('[data-testid=bulk-preview-after] time').count()).toBeGreaterThan(0);
    };

    it('"my key stopped working on my new laptop": find by name, release the old laptop, the new one activates', async () => {
      const name = phone ? 'Knjižara Ćirić Niš' : 'Knjižara Ćirić Novi Sad';
      const lic = await createLicense(t, { customer_name: name, limits: { max_installations: 1 } });
      await activate(lic.license_key, 'old-laptop').expect(200);
      expect((await activate(lic.license_key, 'new-laptop').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
      await start();

      await search(phone ? 'ciric nis' : 'ciric novi sad');
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      const banner = page.locator('[data-testid=refused-banner]');
      expect(await banner.textContent()).toContain('new-laptop');
      await screenshot(page, `ticket-new-laptop-${width}`, { viewport: true });
      const problems = await pageProblems('licence page with the banner');
      await click(banner.locator('[data-testid=refused-release]'));
      await page.waitForURL(/\/confirm\/release\?/);
      expect(await page.textContent('[data-testid=confirm]')).toContain('old-laptop');
      await click(page.locator('[data-testid=confirm-button]'));
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);

      expect(await page.textContent('[role=status].flash')).toMatch(/released/i);
      // The refusal stays named for 7 days; with a seat free there is nothing left to release.
      expect(await page.locator('[data-testid=refused-release]').count()).toBe(0);
      problems.push(...(await pageProblems('licence page after the release')));
      await activate(lic.license_key, 'new-laptop').expect(200);
      const bound = await t.sql<{ hostname: string }>('SELECT hostname FROM activations WHERE license_id = $1 AND released_at IS NULL', [
        lic.id,
      ]);
      expect(bound).toEqual([{ hostname: 'new-laptop' }]);
      expectClicks('newLaptop');
      expect(problems).toEqual([]);
    });

    it('renews a licence found by its key typed without dashes', async () => {
      const lic = await createLicense(t, { license_type: 'YEARLY' });
      const expiry = new Date(Date.now() + 5 * 86_400_000);
      await setLicenseExpiry(t, lic.id, expiry);
      await start();

      await search(lic.license_key.replace(/-/g, '').toLowerCase());
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      await click(page.locator('[data-testid=renew]'));
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);

      const renewed = new Date(expiry);
      renewed.setUTCMonth(renewed.getUTCMonth() + 12);
      expect(await page.textContent('[role=status].flash')).toContain(`Licence renewed until ${renewed.toISOString().slice(0, 10)}.`);
      expect(new Date((await adminLicense(lic.id)).expires_at as string).getTime()).toBe(renewed.getTime());
      expectClicks('renew');
      expect(await pageProblems('licence page after renewing')).toEqual([]);
    });

    it('suspends a licence with a reason', async () => {
      const lic = await createLicense(t);
      const reason = `Unpaid invoice 2026-${width}`;
      await start();

      await search(lic.license_key);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      await click(page.getByRole('link', { name: 'Suspend…' }));
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}/confirm/suspend`);
      await click(page.getByLabel('Reason'));
      await page.keyboard.type(reason);
      await click(page.locator('[data-testid=confirm-button]'));
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);

      expect(await page.textContent('[role=status].flash')).toContain('Licence suspended');
      const stored = await adminLicense(lic.id);
      expect([stored.active, stored.status]).toEqual([false, 'suspended']);
      const [entry] = await t.sql<{ details: { reason?: string } }>(
        `SELECT details FROM audit_entries WHERE license_id = $1 AND action = 'license.updated' ORDER BY id DESC LIMIT 1`,
        [lic.id],
      );
      expect(entry.details.reason).toBe(reason);
      expectClicks('suspend');
      expect(await pageProblems('licence page after suspending')).toEqual([]);
    });

    it('sends the key to the customer again, and it arrives by SMTP', async () => {
      // A long unbreakable address: the "E-mails the key to ..." hint must not widen a phone's page.
      const email = `procurement.department.with.a.very.long.local.part.${width}@example-company-international.com`;
      const lic = await createLicense(t, { customer_name: `Pekara Mika ${width}`, customer_email: email });
      await start();

      await search(lic.license_key);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);
      await click(page.locator('[data-testid=send-key]'));
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);

      expect(await page.textContent('[role=status].flash')).toContain(`The key is on its way to ${email}.`);
      const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes(email) && (m.parsed.text ?? '').includes(lic.license_key));
      expect(mail.parsed.text).toContain(lic.license_key);
      expectClicks('sendKey');
      expect(await pageProblems('licence page after sending the key')).toEqual([]);
    });

    it("lists a customer's machines on all their licences from the whole e-mail address", async () => {
      const email = `it.${width}@zeljo-pos.example`;
      const pos = await createLicense(t, { customer_name: `Željo POS ${width}`, customer_email: email });
      const erp = await createLicense(t, {
        product_code: 'ERP_SUITE',
        customer_name: `Željo d.o.o. ${width}`,
        customer_email: email.toUpperCase(),
      });
      await insertSeat(t, pos.id, { hostname: `kasa-1-${width}` });
      await insertSeat(t, pos.id, { hostname: `kasa-2-${width}` });
      await insertSeat(t, erp.id, { hostname: `office-${width}` });
      await start();

      await search(email);
      await page.waitForURL(/\/licenses\/customer\?email=/);
      const machines = await page.locator('[data-testid=customer-machine]').allTextContents();
      for (const host of [`kasa-1-${width}`, `kasa-2-${width}`, `office-${width}`]) expect(machines.join('\n')).toContain(host);
      expect(machines).toHaveLength(3);
      expectClicks('machines');
      expect(await pageProblems('customer page')).toEqual([]);
    });

    it('adds a note about a customer', async () => {
      const email = `racuni.${width}@apoteka-lipa.example`;
      await createLicense(t, { customer_name: `Apoteka Lipa ${width}`, customer_email: email });
      await createLicense(t, { customer_name: `Apoteka Lipa ${width}`, customer_email: email });
      const note = `Calls before noon (${width}).`;
      await start();

      await search(email);
      await page.waitForURL(/\/licenses\/customer\?email=/);
      await click(page.getByLabel('New note'));
      await page.keyboard.type(note);
      await click(page.getByRole('button', { name: 'Add note' }));
      await page.waitForURL(/#notes$/);

      expect(await page.textContent('[role=status].flash')).toContain('Note added.');
      expect(await page.textContent('[data-testid=customer-note] >> nth=0')).toContain(note);
      expect(await t.sql(`SELECT body FROM customer_notes WHERE customer = $1`, [`email:${email}`])).toEqual([{ body: note }]);
      expectClicks('note');
      expect(await pageProblems('customer page with the note')).toEqual([]);
    });

    it("extends all of one customer's licences by 30 days with a bulk action", async () => {
      const name = `Bulk Pekara ${width}`;
      const made = await Promise.all([1, 2, 3].map(() => createLicense(t, { customer_name: name })));
      const expiry = async (id: number) => Date.parse((await adminLicense(id)).expires_at as string);
      const before = await Promise.all(made.map((l) => expiry(l.id)));
      await start();

      await search(name);
      await page.waitForURL(/\/licenses\?q=/);
      await click(page.getByLabel('All 3 matching'));
      // A dropdown: one click opens it, one chooses.
      clicks += 2;
      await page.selectOption('#bulk-action', 'extend');
      await click(page.getByRole('button', { name: 'Continue…' }));
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      // The field starts empty; the quick pick fills it and shows the new dates.
      expect(await page.inputValue('#field-days')).toBe('');
      await pickThirtyDays();
      await click(page.locator('[data-testid=bulk-confirm-button]'));
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);

      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 3 of 3');
      for (const [i, l] of made.entries()) expect(await expiry(l.id)).toBe(before[i] + 30 * 86_400_000);
      expectClicks('bulkExtend');
      expect(await pageProblems('bulk operation page')).toEqual([]);
    });

    it('extends 20 of 24 licences of one customer by 30 days, ticked with a click and a shift-click', async () => {
      const name = `Range Pekara ${width}`;
      for (let i = 0; i < 24; i += 8) await Promise.all(Array.from({ length: 8 }, () => createLicense(t, { customer_name: name })));
      await start();

      await search(name);
      await page.waitForURL(/\/licenses\?q=/);
      const boxes = page.locator('input[data-select-row]');
      expect(await boxes.count()).toBe(24);
      await click(boxes.nth(0));
      clicks++;
      await boxes.nth(19).click({ modifiers: ['Shift'] });
      expect(await page.textContent('[data-selected-count]')).toBe('Selected rows (20)');
      const ticked = (await boxes.evaluateAll((list) => list.map((b) => (b as unknown as { value: string }).value))).map(Number);
      const rest = ticked.splice(20);
      const before = new Map(
        await Promise.all([...ticked, ...rest].map(async (id) => [id, Date.parse((await adminLicense(id)).expires_at as string)] as const)),
      );
      clicks += 2;
      await page.selectOption('#bulk-action', 'extend');
      await click(page.getByRole('button', { name: 'Continue…' }));
      await page.waitForURL(`${baseUrl}/licenses/bulk/confirm`);
      expect(await page.textContent('h1')).toBe('Extend 20 licences');
      await pickThirtyDays();
      await click(page.locator('[data-testid=bulk-confirm-button]'));
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);

      expect(await page.textContent('[data-testid=bulk-progress] label')).toBe('Finished: 20 of 20');
      for (const id of ticked)
        expect(Date.parse((await adminLicense(id)).expires_at as string)).toBe((before.get(id) as number) + 30 * 86_400_000);
      for (const id of rest) expect(Date.parse((await adminLicense(id)).expires_at as string)).toBe(before.get(id));
      expectClicks('bulkRange');
      expect(await pageProblems('bulk operation page after the range')).toEqual([]);
    });

    it('undoes a bulk extend from the list of bulk operations', async () => {
      const made = await Promise.all([1, 2, 3].map(() => createLicense(t, { customer_name: `Undo Pekara ${width}` })));
      const before = await Promise.all(made.map(async (l) => Date.parse((await adminLicense(l.id)).expires_at as string)));
      const bulk = t.app.get(BulkLicensesService);
      const { id: op } = await bulk.start(
        { action: 'extend', days: 30 },
        { ids: made.map((l) => l.id) },
        { type: 'dashboard', name: 'admin', ip: '127.0.0.1' },
      );
      await start();

      if (phone) {
        await click(page.locator('[data-menu-toggle]'));
        await click(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Licences', exact: true }));
      } else {
        await page.keyboard.press('g');
        await page.keyboard.press('l');
      }
      await page.waitForURL(`${baseUrl}/licenses`);
      await click(page.getByRole('link', { name: 'Bulk operations' }));
      await page.waitForURL(`${baseUrl}/licenses/bulk`);
      await click(page.locator(`a[href="/licenses/bulk/${op}"]`));
      await page.waitForURL(`${baseUrl}/licenses/bulk/${op}`);
      await click(page.locator('[data-testid=bulk-undo]'));
      await page.waitForURL(`${baseUrl}/licenses/bulk/${op}/undo`);
      await click(page.locator('[data-testid=bulk-undo-confirm]'));
      await page.waitForURL(/\/licenses\/bulk\/\d+$/);

      expect(await page.textContent('h1')).toBe(`Undo of bulk operation ${op}`);
      for (const [i, l] of made.entries()) expect(Date.parse((await adminLicense(l.id)).expires_at as string)).toBe(before[i]);
      expectClicks('bulkUndo');
      expect(await pageProblems('undo operation page')).toEqual([]);
    });

    it('opens a saved view of the licence list', async () => {
      await t.sql(`DELETE FROM saved_views`);
      await t.sql(
        `INSERT INTO saved_views (name, query, author) VALUES ('Suspended, soonest expiry first', 'dir=asc&sort=expires_at&status=suspended', 'admin')`,
      );
      const suspended = await createLicense(t, { customer_name: `Suspended view ${width}` });
      await t.admin.put(`/api/v1/admin/licenses/${suspended.id}`).send({ active: false }).expect(200);
      await start();

      if (phone) await click(page.locator('[data-menu-toggle]'));
      await click(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Licences', exact: true }));
      await page.waitForURL(`${baseUrl}/licenses`);
      await click(page.getByRole('link', { name: 'Suspended, soonest expiry first' }));
      await page.waitForURL(/status=suspended/);

      const rows = await page.locator('[data-testid=license-row]').allTextContents();
      expect(rows.some((row) => row.includes(suspended.license_key))).toBe(true);
      expect(rows.every((row) => row.includes('suspended'))).toBe(true);
      expectClicks('savedView');
      expect(await pageProblems('saved view')).toEqual([]);
    });

    it('"why was my licence refused?": find the licence by name, the banner names the code, the reason, the time and the machine', async () => {
      const name = `Foto Studio Refused ${width}`;
      const lic = await createLicense(t, { customer_name: name });
      await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ active: false }).expect(200);
      expect((await activate(lic.license_key, 'studio-pc').expect(400)).body.error.code).toBe('KEY_SUSPENDED');
      await start();

      await search(name);
      await page.waitForURL(`${baseUrl}/licenses/${lic.id}`);

      const banner = page.locator('[data-testid=refused-banner]');
      expect(await banner.locator('[data-testid=refused-code]').textContent()).toBe('KEY_SUSPENDED');
      expect(await banner.textContent()).toContain('the licence was suspended');
      expect(await banner.locator('[data-testid=refused-machine]').textContent()).toContain('studio-pc');
      expect(await banner.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
      expectClicks('refused');
      expect(await pageProblems('licence page with the refusal')).toEqual([]);
    });

    it('frees a machine from the portal: the licence, "Free this machine…", then the confirmation', async () => {
      const email = `portal.${width}@knjizara-free.example`;
      const lic = await createLicense(t, {
        customer_email: email,
        customer_name: `Knjižara Free ${width}`,
        limits: { max_installations: 2 },
      });
      await activate(lic.license_key, 'old-till').expect(200);
      await activate(lic.license_key, 'new-till').expect(200);
      // Signed in (not counted): the link from the e-mail, then "Sign in".
      const customer = await browser.newContext({ viewport, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
      const portal = await customer.newPage();
      const portalErrors = collectConsoleErrors(portal);
      await portal.goto(`${baseUrl}/portal/login`);
      await portal.fill('#field-email', email);
      await portal.click('button[type=submit]');
      await portal.waitForSelector('[data-testid=link-sent]');
      const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes(email));
      const path = /https:\/\/[^/\s]+(\/portal\/sign-in\?token=[A-Za-z0-9_-]+)/.exec(mail.parsed.text ?? '')?.[1];
      await portal.goto(`${baseUrl}${path}`);
      await portal.click('[data-testid=sign-in]');
      await portal.waitForURL(`${baseUrl}/portal`);
      const tap = async (target: Locator) => {
        expect(await target.isVisible()).toBe(true);
        clicks++;
        await target.click();
      };

      await tap(portal.locator('[data-testid=portal-license-link]'));
      await portal.waitForURL(`${baseUrl}/portal/licenses/${lic.id}`);
      await tap(portal.locator('[data-testid=machine-row]', { hasText: 'old-till' }).locator('[data-testid=release-machine]'));
      await portal.waitForURL(/\/machines\/\d+\/release$/);
      await tap(portal.locator('[data-testid=confirm-release]'));
      await portal.waitForURL(`${baseUrl}/portal/licenses/${lic.id}`);

      expect(await portal.textContent('[data-testid=portal-flash]')).toContain('old-till was freed');
      const bound = await t.sql<{ hostname: string }>('SELECT hostname FROM activations WHERE license_id = $1 AND released_at IS NULL', [
        lic.id,
      ]);
      expect(bound).toEqual([{ hostname: 'new-till' }]);
      expectClicks('portalFree');
      const problems = (await seriousViolations(portal)).map((v) => `portal licence page: ${v}`);
      const overflow = await portal.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      if (overflow > 0) problems.push(`portal licence page: scrolls ${overflow}px sideways`);
      expect([...problems, ...portalErrors]).toEqual([]);
      await customer.close();
    });

    it('finds the licences expiring in the next 30 days from the statistics page', async () => {
      const soon = await createLicense(t, { customer_name: `Expiring soon ${width}` });
      const later = await createLicense(t, { customer_name: `Expiring later ${width}` });
      await setLicenseExpiry(t, soon.id, new Date(Date.now() + 3 * 86_400_000));
      await setLicenseExpiry(t, later.id, new Date(Date.now() + 60 * 86_400_000));
      await start();

      await click(page.getByRole('link', { name: 'All expiring licences' }));
      await page.waitForURL(/\/licenses\?expiring=30/);
      const keys = await page.locator('[data-testid=license-row]').allTextContents();
      expect(keys.some((row) => row.includes(soon.license_key))).toBe(true);
      expect(keys.some((row) => row.includes(later.license_key))).toBe(false);
      expectClicks('expiring');
      expect(await pageProblems('expiring licences')).toEqual([]);
    });
  });
});
