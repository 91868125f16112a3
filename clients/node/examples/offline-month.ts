/**
 * An application's licensing, end to end: activate, go offline for a simulated month on licence files, survive a
 * server outage and a key rotation, and refuse a tampered state file. Starts its own server (the repository's
 * build) so it can run in CI: `npm run example` (after `npm run build` at the repository root).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LicenseClient, NetworkError, type CheckResult } from '../src/index.js';
import { createLicense, serverPublicKey, startTestServer } from '../test/server.js';

const DAY = 86_400_000;
const log = (line: string) => console.log(`[example] ${line}`);
const describe = (r: CheckResult) => (r.ok ? `ok (${r.status}, from ${r.source})` : `refused: ${r.reason} (${r.message})`);
function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(`expectation failed: ${what}`);
  log(`  ✓ ${what}`);
}

async function main(): Promise<void> {
  const server = await startTestServer();
  try {
    // The vendor ships the public key with the application (fetched here from the fresh server).
    const shippedKey = await serverPublicKey(server);
    const { license_key } = await createLicense(server, { policy: { license_file_ttl_days: 30 } });
    let simulatedOffset = 0;
    const statePath = join(mkdtempSync(join(tmpdir(), 'example-app-')), 'licence.json');
    const client = new LicenseClient({
      serverUrl: server.url,
      statePath,
      appSalt: 'example-app-2026',
      publicKeys: [shippedKey],
      // Follows the key rotation below without an application update (trust then rests on TLS to serverUrl).
      fetchServerKeys: true,
      product: 'POS_RETAIL',
      now: () => new Date(Date.now() + simulatedOffset),
    });

    log(`activating ${license_key} on this machine (${await client.fingerprint()})`);
    await client.activate(license_key, { appVersion: '1.0.0' });
    const file = await client.licenseFile();
    log(`licence file valid until ${file.file_expires_at}`);

    log('the server goes away; the application runs offline for a month');
    await server.stop();
    await client.validate().then(
      () => expect(false, 'online validation fails during the outage'),
      (err: unknown) => expect(err instanceof NetworkError, 'online validation fails during the outage with a NetworkError'),
    );
    let okDays = 0;
    for (let day = 1; day <= 29; day++) {
      simulatedOffset = day * DAY;
      if ((await client.check()).ok) okDays++;
    }
    expect(okDays === 29, 'days 1-29 offline: every check passes on the licence file');
    simulatedOffset = 31 * DAY;
    const late = await client.check();
    log(`day 31: ${describe(late)}`);
    expect(!late.ok && late.reason === 'FILE_EXPIRED', 'day 31: the file has expired; the application asks to go online');

    simulatedOffset = -3 * DAY;
    const rolledBack = await client.check();
    expect(!rolledBack.ok && rolledBack.reason === 'CLOCK_TAMPERED', 'a clock set back before the latest signed time is refused');

    log('the server is back; the staff rotate the signing key');
    simulatedOffset = 0;
    await server.start();
    const rotated = await server.admin<{ key_id: string }>('POST', '/signing-keys/rotate');
    let answer = await client.validate();
    for (let i = 0; answer.key_id !== rotated.key_id && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      answer = await client.validate();
    }
    expect(answer.valid && answer.key_id === rotated.key_id, 'signed validation verifies with the rotated key (from /public-keys)');
    await client.licenseFile();
    const fresh = await client.check();
    log(`after renewal: ${describe(fresh)}`);
    expect(fresh.ok && fresh.license.key_id === rotated.key_id, 'a new licence file signed by the new key checks offline');

    const state = JSON.parse(readFileSync(statePath, 'utf8')) as { state: { latest_signed_at: string } };
    state.state.latest_signed_at = '2000-01-01T00:00:00.000Z';
    writeFileSync(statePath, JSON.stringify(state));
    const tampered = await client.check();
    expect(!tampered.ok && tampered.reason === 'STATE_TAMPERED', 'an edited state file is refused');
    log('done');
  } finally {
    await server.remove();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err.stack ?? err.message);
    process.exit(1);
  },
);
