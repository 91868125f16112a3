import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createLicense, insertSeat } from '../support/factories';
import type { TestApp } from '../support/test-app';
import {
  collectConsoleErrors,
  DESKTOP,
  expectFocusAfterLoad,
  PHONE,
  screenshot,
  seriousViolations,
  signIn,
  startDashboard,
} from './browser';

const LONG_EMAIL = 'procurement.department.with.a.very.long.local.part@example-company-international.com';
const LONG_HOST = 'kasa-beograd-knez-mihailova-prodavnica-glavna-02.retail.example-company-international.com';

describe('staff dashboard in Chromium (edit, renew, confirmations, search, phone layout, accessibility)', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];
  let muller: { id: number; license_key: string };
  let seatFingerprint: string;
  let longValues: { id: number; license_key: string };
  let endpointId: number;

  const go = async (path: string) => {
    await page.goto(`${baseUrl}${path}`);
    return page;
  };
  const flash = () => page.textContent('[role=status].flash');
  const lastAudit = async (id: number, action: string) =>
    (await t.sql('SELECT details FROM audit_entries WHERE license_id = $1 AND action = $2 ORDER BY id DESC LIMIT 1', [id, action]))[0]
      ?.details as Record<string, unknown>;
  const listedKeys = () => page.$$eval('[data-testid=license-row] a.mono', (links) => links.map((a) => a.textContent));

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    // Enough licences for sorting, paging and the expiring panel, like a small shop's database.
    const names = ['Kod Mike d.o.o.', 'Pekara Žito', 'Apoteka Čačak', 'Market Šabac', 'Knjižara Đorđević', 'Auto Servis Niš'];
    for (let i = 0; i < 30; i++) {
      const created = await createLicense(t, {
        customer_name: `${names[i % names.length]} ${i + 1}`,
        customer_email: `shop${i + 1}@example.rs`,
        license_type: ['YEARLY', 'MONTHLY', 'TRIAL', 'PERPETUAL'][i % 4],
        product_code: ['POS_RETAIL', 'ERP_SUITE', 'FISCAL_BRIDGE'][i % 3],
      });
      if (i % 5 === 0) await insertSeat(t, created.id, { hostname: `till-${i}`, ip: '::ffff:203.0.113.7' });
      if (i % 7 === 1 && i % 4 !== 3) await t.sql(`UPDATE licenses SET expires_at = now() + interval '9 days' WHERE id = $1`, [created.id]);
    }
    muller = await createLicense(t, {
      customer_name: 'Müller Handels GmbH',
      customer_email: 'einkauf@mueller.example',
      customer_pib: '101134702',
      license_type: 'YEARLY',
      limits: { max_installations: 3 },
    });
    seatFingerprint = (await insertSeat(t, muller.id, { hostname: 'KASA-Beograd-01', os: 'Windows 11', ip: '::ffff:198.51.100.4' }))
      .machine_fingerprint;
    await insertSeat(t, muller.id, { hostname: 'KASA-Beograd-02', os: 'Windows 11', ip: '198.51.100.5' });
    // Long unbreakable values on the pages that show them (docs/dashboard.md, Tables): an address, a host name, a URL.
    longValues = await createLicense(t, { customer_name: 'Procurement Department International', customer_email: LONG_EMAIL });
    await insertSeat(t, longValues.id, { hostname: LONG_HOST, os: 'Windows 11', ip: '198.51.100.5' });
    // A refusal of a long host name in the last 7 days (the licence page's banner, the list's mark), and the customer
    // freeing a machine in the portal (the audit log's actor is the long address).
    await t.sql(
      `INSERT INTO audit_entries (action, actor_type, actor, ip, license_id, product_code, details) VALUES
        ('license.activation_denied', 'client', '203.0.113.9', '203.0.113.9', $1, 'POS_RETAIL', jsonb_build_object('code', 'ALREADY_ACTIVATED', 'hostname', $2::text, 'machine_fingerprint', $3::text)),
        ('license.deactivated', 'customer', $4, '198.51.100.9', $1, 'POS_RETAIL', jsonb_build_object('hostname', $2::text))`,
      [longValues.id, `new-${LONG_HOST}`, `sha256:${'ab'.repeat(32)}`, LONG_EMAIL],
    );
    // A long endpoint URL, failed deliveries and two tokens: the widest rows (docs/dashboard.md, Tables).
    const endpoint = await t.admin
      .post('/api/v1/admin/webhooks')
      .send({
        url: 'http://127.0.0.1:9/hooks/licence-events/from-the-licence-server/procurement-department-with-a-very-long-path-segment-without-breaks',
        events: ['*'],
        description: 'Billing system',
      })
      .expect(201);
    endpointId = endpoint.body.id as number;
    await t.admin
      .post('/api/v1/admin/tokens')
      .send({ name: 'webshop', scopes: ['licenses:write', 'licenses:read'] })
      .expect(201);
    await t.admin
      .post('/api/v1/admin/tokens')
      .send({
        name: 'reseller POS',
        scopes: ['licenses:read', 'stats:read', 'audit:read'],
        products: ['POS_RETAIL'],
        expires_at: '2099-12-31T23:59:59Z',
      })
      .expect(201);
    await createLicense(t, { customer_name: 'Webhook Trigger' });
    context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    page = await context.newPage();
    consoleErrors = collectConsoleErrors(page);
    await signIn(page, baseUrl);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the statistics page with the expiring-soon panel and times in the browser time zone', async () => {
    await go('/dashboard');
    expect(await page.locator('[data-testid=expiring-row]').count()).toBeGreaterThan(0);
    const time = page.locator('[data-testid=expiring-row] time').first();
    expect(await time.textContent()).toMatch(/^(in \d+ (days|weeks?)|next week|tomorrow)$/);
    expect(await time.getAttribute('title')).toMatch(/CET|CEST|GMT\+/);
    expect(await time.getAttribute('datetime')).toMatch(/Z$/);
    // The audit panel names key and customer, and the IPv4 address without its IPv6 wrapping.
    expect(await page.textContent('main')).not.toContain('::ffff:');
  });

  it('edits a licence: all errors at once in a focused summary linking to the fields, then saved', async () => {
    await go(`/licenses/${muller.id}`);
    await page.click('text=Edit licence');
    await page.waitForURL(`${baseUrl}/licenses/${muller.id}/edit`);
    await page.fill('#field-customer_email', 'not-an-email');
    await page.fill('#field-customer_pib', '101134701');
    await page.fill('#field-grace_days', '400');
    await page.click('button:has-text("Save changes")');
    await page.waitForSelector('[data-error-summary]');
    // The page's deferred script moves the focus after the summary exists.
    await expectFocusAfterLoad(page, `document.activeElement?.hasAttribute('data-error-summary')`, true);
    const summary = await page.textContent('[data-error-summary]');
    for (const message of [
      'Customer e-mail must be an email address',
      'Customer PIB must be a valid PIB',
      'Grace days must not be greater than 365',
    ]) {
      expect(summary).toContain(message);
    }
    expect(await page.getAttribute('#field-customer_email', 'aria-invalid')).toBe('true');
    await screenshot(page, 'edit-errors-desktop', { viewport: true });
    await page.click('[data-error-summary] a[href="#field-customer_pib"]');
    expect(await page.evaluate<string>('document.activeElement?.id')).toBe('field-customer_pib');

    await page.fill('#field-customer_email', 'nabavka@mueller.example');
    await page.fill('#field-customer_pib', '101134702');
    await page.fill('#field-grace_days', '14');
    await page.fill('#field-notes', 'Edited in the browser');
    await page.click('button:has-text("Save changes")');
    await page.waitForURL(`${baseUrl}/licenses/${muller.id}`);
    expect(await flash()).toBe('Licence saved.');
    expect(await page.textContent('[data-testid=notes]')).toBe('Edited in the browser');
    const changes = (await lastAudit(muller.id, 'license.updated')).changes as Record<string, unknown>;
    expect(Object.keys(changes).sort()).toEqual(['customer_email', 'grace_days', 'notes']);
  });

  it('renews by one term from the current expiry', async () => {
    const before = (await t.sql('SELECT expires_at FROM licenses WHERE id = $1', [muller.id]))[0].expires_at as Date;
    await page.click('[data-testid=renew]');
    await page.waitForSelector('.flash-success');
    const after = (await t.sql('SELECT expires_at FROM licenses WHERE id = $1', [muller.id]))[0].expires_at as Date;
    expect(after.getUTCFullYear()).toBe(before.getUTCFullYear() + 1);
    expect(after.toISOString().slice(4)).toBe(before.toISOString().slice(4));
    expect(await flash()).toBe(`Licence renewed until ${after.toISOString().slice(0, 10)}.`);
  });

  it('copies the key with the copy button', async () => {
    await page.click('.key-heading button[data-copy]');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(muller.license_key);
    expect(await page.textContent('.key-heading button[data-copy]')).toContain('Copied');
  });

  it('confirms releasing one machine, with a reason kept in the audit log', async () => {
    await page.click('[data-testid=seat-row] >> nth=0 >> text=Release…');
    await page.waitForSelector('[data-testid=confirm]');
    await screenshot(page, 'confirm-release-desktop');
    await page.fill('#field-reason', 'Till replaced');
    await page.click('[data-testid=confirm-button]');
    await page.waitForSelector('.flash-success');
    expect(await flash()).toBe('1 seat released.');
    expect(await lastAudit(muller.id, 'license.released')).toMatchObject({ released: 1, reason: 'Till replaced' });
  });

  it('confirms releasing all machines, with a reason', async () => {
    await page.click('text=Release all…');
    await page.waitForSelector('[data-testid=confirm]');
    await page.fill('#field-reason', 'Shop closed for renovation');
    await page.click('[data-testid=confirm-button]');
    await page.waitForSelector('.flash-success');
    expect(await lastAudit(muller.id, 'license.released')).toMatchObject({ reason: 'Shop closed for renovation' });
    expect(await page.locator('[data-testid=seat-row]').count()).toBe(0);
  });

  it('confirms suspending, with a reason; cancelling changes nothing', async () => {
    await page.click('text=Suspend…');
    await page.click('text=Cancel');
    await page.waitForURL(`${baseUrl}/licenses/${muller.id}`);
    expect(await page.textContent('.page-head .badge')).toBe('active');
    await page.click('text=Suspend…');
    await page.fill('#field-reason', 'Invoice 2026-114 unpaid');
    await page.click('[data-testid=confirm-button]');
    await page.waitForSelector('.flash-success');
    expect(await page.textContent('.page-head .badge')).toBe('suspended');
    expect(await lastAudit(muller.id, 'license.updated')).toEqual({
      changes: { active: { from: true, to: false } },
      reason: 'Invoice 2026-114 unpaid',
    });
    await page.click('button:has-text("Reinstate")');
    await page.waitForSelector('.flash-success');
  });

  it('confirms revoking, which needs a reason', async () => {
    const victim = await createLicense(t, { customer_name: 'Revoke Target' });
    await go(`/licenses/${victim.id}`);
    await page.click('text=Revoke…');
    await page.waitForSelector('[data-testid=confirm]');
    await screenshot(page, 'confirm-revoke-desktop', { viewport: true });
    await page.click('[data-testid=confirm-button]');
    // The browser's own check keeps an empty reason from being sent.
    expect(new URL(page.url()).pathname).toBe(`/licenses/${victim.id}/confirm/revoke`);
    await page.fill('#field-reason', 'Chargeback');
    await page.click('[data-testid=confirm-button]');
    await page.waitForSelector('.flash-success');
    expect(await page.textContent('.page-head .badge')).toBe('revoked');
    expect(await lastAudit(victim.id, 'license.revoked')).toEqual({ reason: 'Chargeback' });
  });

  it.each([
    ['a customer name without accents', 'muller handels'],
    ['a customer name in capitals', 'MÜLLER'],
    ['an e-mail', 'nabavka@mueller'],
    ['the key without dashes', 'KEY_COMPACT'],
    ['the key in lower case', 'KEY_LOWER'],
    ['the PIB', '101134702'],
    ['a hostname', 'kasa-beograd-02'],
    ['a fingerprint prefix', 'FINGERPRINT'],
  ])('finds the licence from the top bar by %s: the one match opens it', async (_kind, term) => {
    const value = term
      .replace('KEY_COMPACT', muller.license_key.replace(/-/g, ''))
      .replace('KEY_LOWER', muller.license_key.toLowerCase())
      .replace('FINGERPRINT', seatFingerprint.slice(7, 19));
    await go('/dashboard');
    await page.fill('#topbar-q', value);
    await page.press('#topbar-q', 'Enter');
    await page.waitForURL(`${baseUrl}/licenses/${muller.id}`);
    expect(await page.textContent('[data-testid=license-key]')).toBe(muller.license_key);
  });

  it('"/" focuses the search box from anywhere but a field; several matches show the list', async () => {
    await go('/licenses');
    await page.keyboard.press('/');
    expect(await page.evaluate<string>('document.activeElement?.id')).toBe('topbar-q');
    expect(await page.inputValue('#topbar-q')).toBe('');
    await page.keyboard.type('pekara');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/licenses\?q=pekara$/);
    expect((await listedKeys()).length).toBe(5);
    // As you type, the server's first matches appear under the box; a click opens one.
    await go('/dashboard');
    await page.fill('#topbar-q', '');
    await page.type('#topbar-q', 'pekara žito 1');
    await page.waitForSelector('#topbar-suggestions:not([hidden]) [data-testid=suggestion]');
    const suggested = await page.$$eval('#topbar-suggestions [data-testid=suggestion] a', (links) => links.map((a) => a.textContent));
    expect(suggested.length).toBeGreaterThan(0);
    expect(suggested.every((text) => /Pekara Žito 1/.test(text ?? ''))).toBe(true);
    await page.press('#topbar-q', 'Escape');
    expect(await page.isHidden('#topbar-suggestions')).toBe(true);
    // Typed into a field, "/" is a character like any other.
    await go('/licenses/new');
    await page.click('#field-customer_name');
    await page.keyboard.type('a/b');
    expect(await page.inputValue('#field-customer_name')).toBe('a/b');
  });

  it("opens the customer view from a search result and lists the customer's licences", async () => {
    const second = await createLicense(t, {
      customer_name: 'Müller Handels GmbH',
      customer_email: 'nabavka@mueller.example',
      product_code: 'ERP_SUITE',
    });
    await go('/licenses?q=m%C3%BCller');
    await page.click(`[data-testid=license-row] >> text=Müller Handels GmbH >> nth=0`);
    await page.waitForURL(/\/licenses\/customer\?email=/);
    expect((await listedKeys()).sort()).toEqual([muller.license_key, second.license_key].sort());
  });

  it('sorts the list by a column header, both ways', async () => {
    await go('/licenses');
    await page.click('th >> text=Customer');
    await page.waitForURL(/sort=customer_name&dir=asc/);
    const names = await page.$$eval('[data-testid=license-row] td[data-label=Customer] > a', (links) =>
      links.map((a) => a.textContent ?? ''),
    );
    expect(names).toEqual([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase(), 'en')));
    expect(await page.getAttribute('th[aria-sort]', 'aria-sort')).toBe('ascending');
    await page.click('th >> text=Customer');
    await page.waitForURL(/sort=customer_name&dir=desc/);
    expect(await page.getAttribute('th[aria-sort]', 'aria-sort')).toBe('descending');
  });

  it('filters the audit log by a typed key', async () => {
    await go('/audit');
    await page.fill('#audit-licence', muller.license_key.replace(/-/g, '').toLowerCase());
    await page.click('button:has-text("Filter")');
    await page.waitForURL(/license_id=/);
    expect(await page.locator('.flash-error').count()).toBe(0);
    const rows = page.locator('[data-testid=audit-row]');
    expect(await rows.count()).toBeGreaterThan(3);
    expect(await rows.first().textContent()).toContain(muller.license_key);
    expect(await page.textContent('main')).toContain('Müller Handels GmbH');
  });

  const pages = () => [
    ['statistics', '/dashboard'],
    ['licences', '/licenses'],
    ['licences-search', '/licenses?q=muller'],
    ['licences-expiring', '/licenses?expiring=30&sort=expires_at&dir=asc'],
    ['licences-past-end', '/licenses?page=9'],
    ['customer', '/licenses/customer?email=nabavka%40mueller.example'],
    ['bulk-operations', '/licenses/bulk'],
    ['licence', `/licenses/${muller.id}`],
    ['licence-long-values', `/licenses/${longValues.id}`],
    ['customer-long-values', `/licenses/customer?email=${encodeURIComponent(LONG_EMAIL)}`],
    ['audit-long-values', `/audit?${new URLSearchParams({ actor: LONG_EMAIL }).toString()}`],
    ['licence-edit', `/licenses/${muller.id}/edit`],
    ['confirm-suspend', `/licenses/${muller.id}/confirm/suspend`],
    ['new-licence', '/licenses/new'],
    ['audit', '/audit'],
    ['audit-filtered', `/audit?license_id=${muller.id}&from=2020-01-01`],
    ['offline-activation', '/offline-activation'],
    ['signing-keys', '/signing-keys'],
    ['signing-key-rotate', '/signing-keys/rotate'],
    ['tokens', '/tokens'],
    ['webhooks', '/webhooks'],
    ['webhook-endpoint', `/webhooks/${endpointId}`],
    ['webhook-delete', `/webhooks/${endpointId}/delete`],
    ['stores', '/stores'],
    ['not-found', '/licenses/999999'],
  ];

  /** Controls smaller than 24x24 px (WCAG 2.5.8); a checkbox counts with its label, which takes the click too. */
  const smallTargets = () =>
    page.evaluate<string[]>(`[...document.querySelectorAll('button, a.button, select, textarea, input:not([type=hidden]), main a, nav a')]
      .map((el) => (el.matches('input[type=checkbox], input[type=radio]') && el.closest('label')) || el)
      .filter((el) => el.getClientRects().length > 0 && !el.closest('p, li.prose, .hint, .details, .error-summary, dd, .flash'))
      .map((el) => [el, el.getBoundingClientRect()])
      .filter(([, r]) => r.height < 24 || r.width < 24)
      .map(([el, r]) => el.tagName.toLowerCase() + ' "' + (el.textContent || el.getAttribute('name') || '').trim().slice(0, 30) + '" ' + Math.round(r.width) + 'x' + Math.round(r.height))`);

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ])(
    'has no serious or critical axe-core violations and no horizontal scroll on any page (%s), screenshots written',
    async (name, size) => {
      await page.setViewportSize(size);
      const problems: string[] = [];
      for (const [slug, path] of pages()) {
        await go(path);
        problems.push(...(await seriousViolations(page)).map((v) => `${path}: ${v}`));
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        if (overflow > 0) problems.push(`${path}: scrolls ${overflow}px sideways at ${size.width}px`);
        problems.push(...(await smallTargets()).map((target) => `${path}: target under 24px at ${size.width}px: ${target}`));
        await screenshot(page, `${slug}-${name}`, { viewport: true });
      }
      // The new-licence form with errors, and the login page (logged out in a separate context).
      await go('/licenses/new');
      await page.click('button:has-text("Create licence")');
      await page.waitForSelector('[data-error-summary]');
      problems.push(...(await seriousViolations(page)).map((v) => `new-licence errors: ${v}`));
      await screenshot(page, `new-licence-errors-${name}`, { viewport: true });
      // The token and webhook forms sent empty: summary and per-field messages (docs/dashboard.md, Forms).
      for (const [slug, path, button, fields] of [
        ['tokens', '/tokens', 'Create token', ['name', 'scopes']],
        ['webhooks', '/webhooks', 'Create endpoint', ['url', 'events']],
        ['stores', '/stores', 'Create plan', ['price_id', 'product_code']],
      ] as const) {
        await go(path);
        await page.click(`button:has-text("${button}")`);
        await page.waitForSelector('[data-error-summary]');
        for (const field of fields) {
          if (!(await page.isVisible(`#field-${field}-error`))) problems.push(`${path}: no message at ${field}`);
          if ((await page.locator(`[data-error-summary] a[href="#field-${field}"]`).count()) !== 1)
            problems.push(`${path}: ${field} not in the summary`);
        }
        problems.push(...(await seriousViolations(page)).map((v) => `${slug} errors: ${v}`));
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        if (overflow > 0) problems.push(`${path} errors: scrolls ${overflow}px sideways`);
        await screenshot(page, `${slug}-errors-${name}`, { viewport: true });
      }
      const anonymous = await browser.newPage({ viewport: size });
      await anonymous.goto(`${baseUrl}/login`);
      problems.push(...(await seriousViolations(anonymous)).map((v) => `login: ${v}`));
      await screenshot(anonymous, `login-${name}`);
      await anonymous.close();
      await page.setViewportSize(DESKTOP);
      expect(problems).toEqual([]);
    },
    // Some 25 pages, each checked by axe-core, on a busy machine.
    240_000,
  );

  it('keeps the top bar usable on a phone: the menu opens, links and search work', async () => {
    await page.setViewportSize(PHONE);
    await go('/dashboard');
    expect(await page.isVisible('nav[aria-label=Main]')).toBe(false);
    await page.click('[data-menu-toggle]');
    expect(await page.getAttribute('[data-menu-toggle]', 'aria-expanded')).toBe('true');
    expect(await page.isVisible('nav[aria-label=Main]')).toBe(true);
    await screenshot(page, 'menu-open-phone', { viewport: true });
    await page.click('nav[aria-label=Main] >> text=Audit log');
    await page.waitForURL(`${baseUrl}/audit`);
    await page.click('[data-menu-toggle]');
    await page.fill('#topbar-q', 'pekara');
    await page.press('#topbar-q', 'Enter');
    await page.waitForURL(/\/licenses\?q=pekara/);
    // Tables become cards: each row's cells stacked, nothing cut off.
    const row = page.locator('[data-testid=license-row]').first();
    const box = await row.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= PHONE.width).toBe(true);
    expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    await page.setViewportSize(DESKTOP);
  });

  it('folds the licence list\'s filters behind "Filters" on a phone, counting those on; a wide screen shows them', async () => {
    await page.setViewportSize(PHONE);
    await go('/licenses?status=active&license_type=YEARLY');
    expect(await page.isVisible('#list-filters')).toBe(false);
    expect((await page.textContent('[data-filters-toggle]'))?.trim()).toBe('Filters (2 on)');
    // The first row starts on the first screen.
    const first = await page.locator('[data-testid=license-row]').first().boundingBox();
    expect(first && first.y < PHONE.height).toBe(true);
    await page.click('[data-filters-toggle]');
    expect(await page.getAttribute('[data-filters-toggle]', 'aria-expanded')).toBe('true');
    expect(await page.isVisible('#list-filters')).toBe(true);
    expect(await page.evaluate<string>('document.activeElement?.id')).toBe('filter-q');
    await page.selectOption('#filter-status', '');
    await page.click('#list-filters button[type=submit]');
    await page.waitForURL((url) => !url.search.includes('status=active'));
    expect((await page.textContent('[data-filters-toggle]'))?.trim()).toBe('Filters (1 on)');
    await page.setViewportSize(DESKTOP);
    expect(await page.isVisible('#list-filters')).toBe(true);
    expect(await page.isVisible('[data-filters-toggle]')).toBe(false);
  });

  it('reaches the content with the skip link first', async () => {
    await go('/licenses');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<boolean>(`document.activeElement?.closest('main') !== null`)).toBe(true);
  });

  it('raised no Content-Security-Policy violations or script errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
