import type { Server } from 'node:http';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, chromium, Locator, Page } from 'playwright-core';
import type { AppConfig } from '../../src/config/app-config';
import { ADMIN } from '../dashboard-helpers';
import { createTestApp, TestApp } from '../support/test-app';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** axe-core's source, injected with page.evaluate: the CSP (rightly) refuses addScriptTag's inline script. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: string[] }[];
}

/**
 * In the page: the ids of the rules that can report nothing above moderate. A rule's finding takes the highest impact
 * among its own and its checks'; when even that is minor or moderate, the rule can never be one of the findings
 * {@link seriousViolations} keeps, so it is switched off rather than run and thrown away (a third of axe-core's time
 * on the dashboard's pages). Every other rule runs exactly as axe-core's defaults say (tags it excludes stay excluded).
 */
const RULES_BELOW_SERIOUS = `(() => {
  const order = ['minor', 'moderate', 'serious', 'critical'];
  const highest = (rule) => Math.max(
    order.indexOf(rule.impact),
    ...[...rule.any, ...rule.all, ...rule.none].map((check) => {
      const found = axe._audit.checks[typeof check === 'string' ? check : check.id];
      return order.indexOf(found && ((found.metadata && found.metadata.impact) || found.impact));
    }),
  );
  return axe._audit.rules.filter((rule) => { const h = highest(rule); return h === 0 || h === 1; }).map((rule) => rule.id);
})()`;

/** axe-core's serious and critical findings on the page, one line each (docs/portal.md, Forms). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  // Expressions as strings: they run in the page, whose DOM types this Node project does not load.
  const violations = await page.evaluate<AxeViolation[]>(
    `axe.run(document, {
      resultTypes: ['violations'],
      rules: Object.fromEntries(${RULES_BELOW_SERIOUS}.map((id) => [id, { enabled: false }])),
    }).then((r) => r.violations)`,
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'screenshots');
/**
 * Screenshots are for people (docs/screenshots/ is picked from them), not for the assertions, and they cost more than
 * axe-core does on the same page (a full-page capture ~0.5 s, the viewport's ~0.2 s): taken only when
 * BROWSER_SCREENSHOTS=1 (docs/testing.md, The browser suite). Every check beside them runs either way.
 */
const TAKE_SCREENSHOTS = process.env.BROWSER_SCREENSHOTS === '1';
if (TAKE_SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });

/** One element as `name.png` (a chart, a panel), when screenshots are asked for. */
export async function shoot(target: Pick<Locator, 'screenshot'>, name: string): Promise<void> {
  if (TAKE_SCREENSHOTS) await target.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/**
 * The rows of the table under a `## heading` of the dashboard's decisions (docs/dashboard.md), each as its trimmed cells
 * (the first is the task), the header and the separator left out: the specs that count clicks, taps and chords compare
 * with them, so the docs cannot drift.
 */
export function dashboardDocTable(heading: string): string[][] {
  const docs = readFileSync(join(__dirname, '..', '..', 'docs', 'dashboard.md'), 'utf8');
  const section = new RegExp(`^## ${heading}\\n([\\s\\S]*?)(?=^## )`, 'm').exec(docs)?.[1] ?? '';
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  return lines.slice(2).map((line) =>
    line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim()),
  );
}

/** The everyday tickets, by the names docs/dashboard.md's tables give them (Clicks per task, Key chords per task). */
export const TICKETS = {
  newLaptop: '"My key stopped working on my new laptop" (find by name, release the old machine)',
  renew: 'Renew a licence found by its key (dashes optional)',
  suspend: 'Suspend a licence with a reason',
  sendKey: 'Send the key to the customer again',
  machines: "A customer's machines on all their licences",
  note: 'Add a note about a customer',
  expiring: 'Licences expiring in the next 30 days (from the statistics page)',
  bulkExtend: "Extend all of one customer's licences by 30 days",
  bulkRange: "Extend 20 of a customer's licences by 30 days (a click, then Shift and a click)",
  bulkUndo: 'Undo a bulk extend',
  savedView: 'Open a saved view of the licence list',
  refused: '"Why was my licence refused?" (find a refused licence\'s reason)',
  portalFree: 'Free a machine from the portal (the customer, signed in)',
} as const;

/** The real app listening on a free port, and Debian's Chromium (never a downloaded browser). */
export async function startDashboard(
  overrides: Partial<AppConfig> = {},
  port = 0,
): Promise<{ t: TestApp; baseUrl: string; browser: Browser }> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const t = await createTestApp(overrides);
  await t.app.listen(port, '127.0.0.1');
  const { port: listening } = (t.app.getHttpServer() as Server).address() as AddressInfo;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return { t, baseUrl: `http://127.0.0.1:${listening}`, browser };
}

/**
 * What went wrong in a page besides its own HTTP status (a 401 login page is intended): CSP
 * violations and script errors from the console, and sub-resources (styles, scripts, images) that failed.
 */
export function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('response', (res) => {
    if (res.status() >= 400 && res.request().resourceType() !== 'document') errors.push(`${res.status()} ${res.url()}`);
  });
  return errors;
}

/**
 * Expects `read` (an expression about the focused element) to give `expected` once the focus has settled after
 * a navigation. The browser applies `autofocus`, and a page's deferred script moves the focus, in a rendering
 * step after `load`, so a read right after `waitForURL` can still see the body: this waits (at most 5 s) first,
 * and a wrong focus still fails with the value found.
 */
export async function expectFocusAfterLoad(page: Page, read: string, expected: string | boolean): Promise<void> {
  await page.waitForFunction(`(${read}) === ${JSON.stringify(expected)}`, undefined, { timeout: 5000 }).catch(() => undefined);
  expect(await page.evaluate(read)).toBe(expected);
}

/** When screenshots are asked for, the whole page as `name.png`; with `viewport`, also what fits the window as `name-viewport.png` (small enough for docs/). */
export async function screenshot(page: Page, name: string, options: { viewport?: boolean } = {}): Promise<void> {
  if (!TAKE_SCREENSHOTS) return;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  if (options.viewport) await page.screenshot({ path: join(SCREENSHOTS, `${name}-viewport.png`) });
}

/** Signs in through the login form as ADMIN and waits for the dashboard. */
export async function signIn(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.fill('input[name=username]', ADMIN.username);
  await page.fill('input[name=password]', ADMIN.password);
  await page.click('button[type=submit]');
  await page.waitForURL(`${baseUrl}/dashboard`);
}

export interface SignedInDashboard {
  t: TestApp;
  browser: Browser;
  baseUrl: string;
  page: Page;
  /** What {@link collectConsoleErrors} gathered on `page`. */
  consoleErrors: string[];
}

/** Both sizes of every page check, for `it.each`. */
export const BOTH_WIDTHS = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const;

/** Closes what {@link startSignedIn} started (tolerates a start that failed). */
export async function stopSignedIn(d: SignedInDashboard | undefined): Promise<void> {
  await d?.browser.close();
  await d?.t.close();
}

/** The dashboard with ADMIN signed in on a desktop-sized page in Belgrade's time zone, collecting console errors. */
export async function startSignedIn(): Promise<SignedInDashboard> {
  const { t, browser, baseUrl } = await startDashboard();
  const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Belgrade', locale: 'en-GB' });
  const page = await context.newPage();
  const consoleErrors = collectConsoleErrors(page);
  await signIn(page, baseUrl);
  return { t, browser, baseUrl, page, consoleErrors };
}
