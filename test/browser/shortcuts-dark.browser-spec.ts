import { createLicense, insertSeat } from '../support/factories';
import { DESKTOP, PHONE, screenshot, seriousViolations, SignedInDashboard, startSignedIn, stopSignedIn, BOTH_WIDTHS } from './browser';

/** The "?" list of keyboard shortcuts and dark mode (docs/dashboard.md, Keyboard shortcuts and Dark mode). */
describe('keyboard shortcuts and dark mode in Chromium', () => {
  let d: SignedInDashboard;
  let licenseId: number;

  const go = (path: string) => d.page.goto(`${d.baseUrl}${path}`);
  const dialogOpen = () => d.page.evaluate<boolean>(`document.getElementById('shortcuts').open`);
  const focusedInDialog = () => d.page.evaluate<boolean>(`document.getElementById('shortcuts').contains(document.activeElement)`);

  beforeAll(async () => {
    d = await startSignedIn();
    const t = d.t;
    for (let i = 0; i < 4; i++) {
      await createLicense(t, { customer_name: `Pekara Žito ${i + 1}`, license_type: ['YEARLY', 'TRIAL', 'MONTHLY', 'PERPETUAL'][i] });
    }
    const licence = await createLicense(t, {
      customer_name: 'Knjižara Đorđević',
      customer_email: 'knjizara@customer.example',
      limits: { max_installations: 2 },
    });
    licenseId = licence.id;
    await insertSeat(t, licenseId, { hostname: 'KASA-01', os: 'Windows 11', ip: '198.51.100.4' });
    await t.sql(`UPDATE licenses SET active = false WHERE id = (SELECT min(id) FROM licenses)`);
  }, 60_000);
  afterAll(() => stopSignedIn(d));

  it.each(BOTH_WIDTHS)(
    '"?" opens the list of shortcuts as a modal dialog, Escape closes it and the focus returns (%s)',
    async (name, size) => {
      await d.page.setViewportSize(size);
      await d.page.emulateMedia({ colorScheme: 'light' });
      await go('/licenses');
      expect(await dialogOpen()).toBe(false);
      expect(await d.page.isVisible('[data-testid=shortcuts]')).toBe(false);
      await d.page.keyboard.press('?');
      expect(await dialogOpen()).toBe(true);
      expect(await d.page.isVisible('[data-testid=shortcuts]')).toBe(true);
      // A dialog named by its heading, listing every shortcut the page script knows.
      expect(await d.page.getAttribute('[data-testid=shortcuts]', 'aria-labelledby')).toBe('shortcuts-title');
      expect(await d.page.textContent('#shortcuts-title')).toBe('Keyboard shortcuts');
      const keys = await d.page.$$eval('[data-testid=shortcuts] kbd', (kbds) => kbds.map((k) => k.textContent));
      expect(keys).toEqual([
        'Ctrl',
        'K',
        '⌘',
        'K',
        '/',
        '↓',
        '↑',
        'Enter',
        'Esc',
        'g',
        'd',
        'g',
        'l',
        'g',
        'n',
        'g',
        'a',
        'g',
        'p',
        'r',
        'R',
        'n',
        'k',
        's',
        'i',
        'e',
        'c',
        'Ctrl',
        'Enter',
        '?',
      ]);
      expect(await focusedInDialog()).toBe(true);
      // Modal: Tab never reaches the page behind (its one control, then the browser's own UI), nor does "/".
      for (let i = 0; i < 3; i++) {
        await d.page.keyboard.press('Tab');
        expect(
          await d.page.evaluate<boolean>(
            `document.getElementById('shortcuts').contains(document.activeElement) || document.activeElement === document.body`,
          ),
        ).toBe(true);
      }
      await d.page.keyboard.press('/');
      expect(await d.page.evaluate<string>('document.activeElement?.id')).not.toBe('topbar-q');
      expect(await seriousViolations(d.page)).toEqual([]);
      const box = await d.page.locator('[data-testid=shortcuts]').boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= size.width).toBe(true);
      await screenshot(d.page, `shortcuts-${name}`, { viewport: true });
      await d.page.emulateMedia({ colorScheme: 'dark' });
      expect(await seriousViolations(d.page)).toEqual([]);
      await screenshot(d.page, `shortcuts-dark-${name}`, { viewport: true });

      await d.page.keyboard.press('Escape');
      expect(await dialogOpen()).toBe(false);
      expect(await d.page.evaluate<string>('document.activeElement?.tagName')).toBe('BODY');

      // The Close button closes it too.
      await d.page.keyboard.press('?');
      expect(await dialogOpen()).toBe(true);
      await d.page.click('[data-shortcuts-close]');
      expect(await dialogOpen()).toBe(false);
      await d.page.emulateMedia({ colorScheme: 'light' });
    },
  );

  it('"g" then a letter opens that page of the top bar, at both widths; never while typing in a field', async () => {
    for (const [, size] of BOTH_WIDTHS) {
      await d.page.setViewportSize(size);
      await go('/dashboard');
      for (const [keys, path] of [
        ['gl', '/licenses'],
        ['ga', '/audit'],
        ['gn', '/licenses/new'],
        ['gp', '/products'],
        ['gd', '/dashboard'],
      ]) {
        await d.page.keyboard.press(keys[0]);
        await d.page.keyboard.press(keys[1]);
        await d.page.waitForURL(`${d.baseUrl}${path}`);
      }
    }
    await d.page.setViewportSize(DESKTOP);
    // A letter alone, or "g" and a letter with no page, does nothing.
    await go('/dashboard');
    await d.page.keyboard.press('l');
    await d.page.keyboard.press('g');
    await d.page.keyboard.press('x');
    await d.page.keyboard.press('l');
    await d.page.waitForTimeout(300);
    expect(d.page.url()).toBe(`${d.baseUrl}/dashboard`);
    // Typed into a field, "gl" is text.
    await go('/licenses/new');
    await d.page.click('input[name=customer_name]');
    await d.page.keyboard.type('gl ga');
    await d.page.waitForTimeout(300);
    expect(d.page.url()).toBe(`${d.baseUrl}/licenses/new`);
    expect(await d.page.inputValue('input[name=customer_name]')).toBe('gl ga');
  });

  it('gives the focus back to what opened the list: a focused link with "?", the Shortcuts button', async () => {
    await d.page.setViewportSize(DESKTOP);
    await go('/licenses');
    const focused = () =>
      d.page.evaluate<string>(`(document.activeElement?.tagName ?? '') + ' ' + (document.activeElement?.textContent ?? '').trim()`);
    await d.page.focus('nav[aria-label=Main] a[href="/audit"]');
    await d.page.keyboard.press('?');
    expect(await dialogOpen()).toBe(true);
    await d.page.keyboard.press('Escape');
    expect(await dialogOpen()).toBe(false);
    expect(await focused()).toBe('A Audit log');

    const button = d.page.getByRole('button', { name: 'Shortcuts' });
    expect(await button.isVisible()).toBe(true);
    await button.click();
    expect(await dialogOpen()).toBe(true);
    expect(await focusedInDialog()).toBe(true);
    await d.page.click('[data-shortcuts-close]');
    expect(await dialogOpen()).toBe(false);
    expect(await focused()).toBe('BUTTON Shortcuts');
    // From the keyboard: Enter on the button, Escape, and Enter again reopens it.
    await d.page.keyboard.press('Enter');
    expect(await dialogOpen()).toBe(true);
    await d.page.keyboard.press('Escape');
    expect(await focused()).toBe('BUTTON Shortcuts');
  });

  it('types "?" into a field instead of opening the list', async () => {
    await d.page.setViewportSize(DESKTOP);
    await go('/licenses');
    await d.page.keyboard.press('/');
    expect(await d.page.evaluate<string>('document.activeElement?.id')).toBe('topbar-q');
    await d.page.keyboard.type('a?b');
    expect(await d.page.inputValue('#topbar-q')).toBe('a?b');
    expect(await dialogOpen()).toBe(false);
    await go('/licenses/new');
    await d.page.click('input[name=customer_name]');
    await d.page.keyboard.type('Who?');
    expect(await d.page.inputValue('input[name=customer_name]')).toBe('Who?');
    expect(await dialogOpen()).toBe(false);
  });

  const pages = () => [
    ['statistics', '/dashboard'],
    ['licences', '/licenses'],
    ['licence', `/licenses/${licenseId}`],
    ['customer', '/licenses/customer?email=knjizara%40customer.example'],
    ['confirm-revoke', `/licenses/${licenseId}/confirm/revoke`],
    ['edit', `/licenses/${licenseId}/edit`],
    ['new-licence', '/licenses/new'],
    ['audit', '/audit'],
    ['emails', '/emails'],
    ['products', '/products'],
    ['tokens', '/tokens'],
    ['webhooks', '/webhooks'],
    ['signing-keys', '/signing-keys'],
    ['stores', '/stores'],
    ['not-found', '/licenses/999999'],
  ];

  it.each(BOTH_WIDTHS)(
    'follows a dark system setting with no serious or critical axe-core violations on any page (%s)',
    async (name, size) => {
      await d.page.setViewportSize(size);
      await d.page.emulateMedia({ colorScheme: 'dark' });
      const problems: string[] = [];
      for (const [slug, path] of pages()) {
        await go(path);
        // The page really is dark: the stylesheet's dark colours apply, not only the browser's.
        const background = await d.page.evaluate<string>(`getComputedStyle(document.documentElement).backgroundColor`);
        if (background !== 'rgb(17, 20, 26)') problems.push(`${path}: background ${background}`);
        problems.push(...(await seriousViolations(d.page)).map((v) => `${path}: ${v}`));
        await screenshot(d.page, `dark-${slug}-${name}`, { viewport: true });
      }
      // A form with every error shown, the phone's open menu, and the login d.page.
      await go('/licenses/new');
      await d.page.click('button:has-text("Create licence")');
      await d.page.waitForSelector('[data-error-summary]');
      problems.push(...(await seriousViolations(d.page)).map((v) => `new-licence errors: ${v}`));
      if (size === PHONE) {
        await d.page.click('[data-menu-toggle]');
        problems.push(...(await seriousViolations(d.page)).map((v) => `menu open: ${v}`));
        await screenshot(d.page, `dark-menu-open-${name}`, { viewport: true });
      }
      const anonymous = await d.browser.newPage({ viewport: size, colorScheme: 'dark' });
      await anonymous.goto(`${d.baseUrl}/login`);
      problems.push(...(await seriousViolations(anonymous)).map((v) => `login: ${v}`));
      await anonymous.close();
      await d.page.emulateMedia({ colorScheme: 'light' });
      expect(problems).toEqual([]);
    },
    // Fifteen pages and more, each checked by axe-core and photographed: over the default minute on a busy machine.
    120_000,
  );

  it('keeps the light colours when the system asks for light', async () => {
    await d.page.emulateMedia({ colorScheme: 'light' });
    await go('/dashboard');
    expect(await d.page.evaluate<string>(`getComputedStyle(document.documentElement).backgroundColor`)).toBe('rgb(245, 246, 248)');
  });

  it('raised no Content-Security-Policy violations or script errors', () => {
    expect(d.consoleErrors).toEqual([]);
  });
});
