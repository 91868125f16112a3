import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { activationRequest, createLicense, fingerprint } from '../support/factories';
import type { TestApp } from '../support/test-app';
import { collectConsoleErrors, screenshot, signIn, startDashboard } from './browser';

/** Air-gapped activation as staff do it: upload the machine's request, check what it binds, confirm, take the .lic file. */
describe('offline activation in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let baseUrl: string;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    ({ t, browser, baseUrl } = await startDashboard());
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    consoleErrors = collectConsoleErrors(page);
    await signIn(page, baseUrl);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('uploads a request file, previews the binding, confirms and downloads <key>.lic', async () => {
    const lic = await createLicense(t, { customer_name: 'Rudnik Bor d.o.o.' });
    const fp = fingerprint('browser-airgap');
    const dir = mkdtempSync(join(tmpdir(), 'airgap-'));
    const requestFile = join(dir, 'activation-request.txt');
    writeFileSync(requestFile, activationRequest({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'mine-scada-1' }));

    // The settings pages sit under the menu's More (docs/dashboard.md, Pages).
    await page.click('nav details.nav-more > summary');
    await page.click('nav >> text=Offline activation');
    await page.waitForURL(`${baseUrl}/offline-activation`);
    await page.setInputFiles('input[data-request-file]', requestFile);
    for (let i = 0; i < 50 && !(await page.inputValue('textarea[name=request]')).includes('BEGIN'); i++) await page.waitForTimeout(100);
    expect(await page.inputValue('textarea[name=request]')).toContain('-----BEGIN ACTIVATION REQUEST-----');
    await screenshot(page, 'offline-activation-1-request');
    await page.click('button:has-text("Check the request")');
    await page.waitForSelector('[data-testid=offline-preview]');
    const preview = await page.textContent('[data-testid=offline-preview]');
    expect(preview).toContain(lic.license_key);
    expect(preview).toContain('Rudnik Bor d.o.o.');
    expect(preview).toContain('mine-scada-1');
    expect(await page.textContent('[data-testid=offline-fingerprint]')).toBe(fp);
    await screenshot(page, 'offline-activation-2-preview');

    // The page changes and its script starts the download once (docs/dashboard.md, Messages after an action).
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=offline-confirm]')]);
    expect(download.suggestedFilename()).toBe(`${lic.license_key}.lic`);
    expect(new URL(page.url()).pathname).toBe('/offline-activation/done');
    expect(await page.textContent('.flash-success')).toBe(`Seat bound: mine-scada-1 now holds ${lic.license_key}.`);
    expect(await page.textContent('[data-download-status]')).toContain('Licence file downloaded');
    await screenshot(page, 'offline-activation-3-done');
    const saved = join(dir, download.suggestedFilename());
    await download.saveAs(saved);
    const text = readFileSync(saved, 'utf8');
    expect(text.startsWith('-----BEGIN LICENSE FILE-----\n')).toBe(true);
    const decoded = JSON.parse(Buffer.from(text.trim().split('\n').slice(1, -1).join(''), 'base64').toString('utf8')) as {
      license: { machine_fingerprint: string };
    };
    expect(decoded.license.machine_fingerprint).toBe(fp);

    await page.goto(`${baseUrl}/licenses/${lic.id}`);
    expect(await page.locator('[data-testid=seat-row]').count()).toBe(1);
    const [again] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=download-license-file]')]);
    expect(again.suggestedFilename()).toBe(`${lic.license_key}.lic`);
    expect(consoleErrors).toEqual([]);
  });

  it('a pasted request that is not one comes back with its message', async () => {
    await page.goto(`${baseUrl}/offline-activation`);
    await page.fill('textarea[name=request]', 'hello, this is not a request');
    await page.click('button:has-text("Check the request")');
    await expect(page.textContent('[data-testid=offline-errors]')).resolves.toContain('-----BEGIN ACTIVATION REQUEST-----');
    expect(await page.inputValue('textarea[name=request]')).toBe('hello, this is not a request');
  });
});
