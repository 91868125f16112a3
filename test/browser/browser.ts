import type { Server } from 'node:http';
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import type { AppConfig } from '../../src/config/app-config';
import { ADMIN } from '../dashboard-helpers';
import { createTestApp, TestApp } from '../support/test-app';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(__dirname, '..', '..', 'test-results', 'screenshots');

/** The real app listening on a free port, and Debian's Chromium (never a downloaded browser). */
export async function startDashboard(overrides: Partial<AppConfig> = {}): Promise<{ t: TestApp; baseUrl: string; browser: Browser }> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const t = await createTestApp(overrides);
  await t.app.listen(0, '127.0.0.1');
  const { port } = (t.app.getHttpServer() as Server).address() as AddressInfo;
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
  return { t, baseUrl: `http://127.0.0.1:${port}`, browser };
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

/** The whole page as `name.png`; with `viewport`, also what fits the window as `name-viewport.png` (small enough for docs/). */
export async function screenshot(page: Page, name: string, options: { viewport?: boolean } = {}): Promise<void> {
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
