import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MailService } from '../src/mail/mail.service';
import { ExpiryScanService } from '../src/licenses/expiry-scan.service';
import { EventFanoutService } from '../src/events/event-fanout.service';
import { asBearer, createLicense, fannedOut, setLicenseExpiry } from './support/factories';
import { startSmtpServer } from './support/smtp-server';
import { createTestApp, TestApp } from './support/test-app';

// Messages go through the fan-out, the job engine and a real SMTP server, with 1 s retries.
jest.setTimeout(90_000);

const DAY = 86_400_000;
type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;
type MailRow = { id: string; kind: string; status: string; attempts: number; last_error: string | null; to_address: string };

describe('customer e-mail through a real SMTP server (docs/mail.md)', () => {
  let t: TestApp;
  let smtp: Smtp;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      mail: {
        smtpUrl: smtp.url,
        from: 'keys@vendor.example',
        brandName: 'Vendor Soft',
        replyTo: 'support@vendor.example',
        disabledKinds: [],
        retryScheduleSeconds: [1, 1],
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });
  beforeEach(() => smtp.respond(() => undefined));

  const mailOf = (licenseId: number) =>
    t.sql<MailRow>('SELECT id, kind, status, attempts, last_error, to_address FROM mail_messages WHERE license_id = $1 ORDER BY id', [
      licenseId,
    ]);
  /** Waits until every message of the licence has `status` (or, with no status, any final one: neither pending nor sending). */
  async function settled(licenseId: number, status?: string, timeoutMs = 30_000): Promise<MailRow[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await fannedOut(t);
      const rows = await mailOf(licenseId);
      const done = (r: MailRow) => (status ? r.status === status : !['pending', 'sending'].includes(r.status));
      if (rows.length > 0 && rows.every(done)) return rows;
      if (Date.now() > deadline) throw new Error(`mail of licence ${licenseId} not ${status}: ${JSON.stringify(rows)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  /** The licence's expiry moved into the reminder window and the minute's scan run now, as the job engine would. */
  async function remind(licenseId: number, inMs: number) {
    await setLicenseExpiry(t, licenseId, new Date(Date.now() + inMs), 0);
    await t.app.get(ExpiryScanService).scanExpiries();
  }
  const headerLines = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n');

  it('notify_customer: true mails the key (license_issued: text and HTML, brand, Reply-To, no List-Unsubscribe)', async () => {
    const created = await createLicense(t, { customer_email: 'mika@shop.example', customer_name: 'Mika', notify_customer: true });
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes('mika@shop.example'));
    expect(mail.parsed.subject).toBe('Your licence key for Retail Point of Sale');
    expect(mail.parsed.from?.value).toEqual([{ name: 'Vendor Soft', address: 'keys@vendor.example' }]);
    expect(mail.parsed.replyTo?.value).toEqual([{ name: '', address: 'support@vendor.example' }]);
    expect(mail.parsed.text).toContain(created.license_key);
    expect(mail.parsed.html).toContain(created.license_key);
    expect(mail.parsed.html).not.toMatch(/<img|<link|https?:\/\/(?!licences\.example\.test)/);
    expect(headerLines(mail.raw).filter((l) => /^list-unsubscribe/i.test(l))).toEqual([]);
    expect(await settled(created.id, 'sent')).toEqual([expect.objectContaining({ kind: 'license_issued', attempts: 1, last_error: null })]);
  });

  it('no notify_customer, or no e-mail address: no license_issued', async () => {
    const quiet = await createLicense(t, { customer_email: 'quiet@shop.example' });
    const noAddress = await createLicense(t, { notify_customer: true });
    await fannedOut(t);
    expect(await mailOf(quiet.id)).toEqual([]);
    expect(await mailOf(noAddress.id)).toEqual([]);
  });

  it('refuses a non-boolean notify_customer (400)', async () => {
    const res = await t.admin
      .post('/api/v1/admin/licenses')
      .send({ product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'X', notify_customer: 'yes' });
    expect(res.status).toBe(400);
  });

  it('non-ASCII names reach headers (encoded) and bodies intact', async () => {
    const created = await createLicense(t, {
      customer_email: 'dorde@shop.example',
      customer_name: 'Đorđe Petrović',
      notify_customer: true,
    });
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes('dorde@shop.example'));
    expect(mail.parsed.to && 'value' in mail.parsed.to ? mail.parsed.to.value : []).toEqual([
      { name: 'Đorđe Petrović', address: 'dorde@shop.example' },
    ]);
    // Headers travel as 7-bit text (RFC 2047 encoded words); the bodies say the name as written.
    expect(headerLines(mail.raw).every((line) => /^[\x20-\x7e\t]*$/.test(line))).toBe(true);
    expect(mail.parsed.text).toContain('Hello Đorđe Petrović,');
    expect(mail.parsed.html).toContain('Đorđe Petrović');
    await settled(created.id, 'sent');
  });

  it('attacker: a line break in the customer name never becomes a header', async () => {
    const created = await createLicense(t, { customer_email: 'victim-owner@shop.example' });
    await t.sql(`UPDATE licenses SET customer_name = $2 WHERE id = $1`, [
      created.id,
      'Evil\r\nBcc: attacker@evil.example\r\nX-Injected: 1',
    ]);
    await remind(created.id, 2 * DAY);
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes('victim-owner@shop.example'));
    expect(mail.envelopeTo).toEqual(['victim-owner@shop.example']);
    expect(mail.parsed.headers.has('bcc')).toBe(false);
    expect(mail.parsed.headers.has('x-injected')).toBe(false);
    expect(headerLines(mail.raw).filter((l) => /^(bcc|x-injected):/i.test(l))).toEqual([]);
    expect(smtp.received.some((m) => m.envelopeTo.includes('attacker@evil.example'))).toBe(false);
  });

  it('attacker: a line break in the address is never sent (failed at once, shown to staff)', async () => {
    const created = await createLicense(t, { customer_email: 'ok@shop.example' });
    await t.sql(`UPDATE licenses SET customer_email = $2 WHERE id = $1`, [created.id, 'ok@shop.example\r\nBcc: attacker@evil.example']);
    await remind(created.id, 2 * DAY);
    const rows = await settled(created.id, 'failed');
    expect(rows).toEqual([
      expect.objectContaining({ kind: 'expiring_soon', attempts: 0, last_error: 'invalid recipient address: not sent' }),
    ]);
    expect(smtp.received.some((m) => m.envelopeTo.includes('attacker@evil.example'))).toBe(false);
  });

  it('421 then 250: retried and sent once', async () => {
    smtp.respond((address, n) => (address === 'busy@shop.example' && n === 1 ? 421 : undefined));
    const created = await createLicense(t, { customer_email: 'busy@shop.example', notify_customer: true });
    const [row] = await settled(created.id, 'sent');
    expect(row.attempts).toBe(2);
    expect(row.last_error).toMatch(/421/);
    expect(smtp.received.filter((m) => m.envelopeTo.includes('busy@shop.example'))).toHaveLength(1);
  });

  it('550: failed at once, not retried; staff retry it (409 unless failed)', async () => {
    smtp.respond((address) => (address === 'gone@shop.example' ? 550 : undefined));
    const created = await createLicense(t, { customer_email: 'gone@shop.example', notify_customer: true });
    const [row] = await settled(created.id, 'failed');
    expect(row.attempts).toBe(1);
    expect(row.last_error).toMatch(/550/);
    // Past the whole retry schedule (1 s, 1 s): still one attempt.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await mailOf(created.id))[0]).toEqual(expect.objectContaining({ status: 'failed', attempts: 1 }));
    expect(smtp.tries.get('gone@shop.example')).toBe(1);

    const listed = (await t.admin.get('/api/v1/admin/mail').expect(200)).body as Array<Record<string, unknown>>;
    expect(listed.find((m) => m.id === Number(row.id))).toEqual(
      expect.objectContaining({ kind: 'license_issued', to: 'gone@shop.example', status: 'failed', attempts: 1, license_id: created.id }),
    );
    // attacker: a writer limited to another product cannot retry (or learn of) this message.
    const erpWriter = (
      await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: 'erp-mail-writer', scopes: ['licenses:write'], products: ['ERP_SUITE'] })
        .expect(201)
    ).body as { token: string };
    await asBearer(t, erpWriter.token).post(`/api/v1/admin/mail/${row.id}/retry`).expect(404);
    expect(await t.sql(`SELECT id FROM audit_entries WHERE action = 'mail.retried'`)).toEqual([]);
    expect((await mailOf(created.id))[0]).toEqual(expect.objectContaining({ status: 'failed' }));

    smtp.respond(() => undefined);
    const retried = await t.admin.post(`/api/v1/admin/mail/${row.id}/retry`).expect(200);
    expect(retried.body).toEqual(expect.objectContaining({ status: 'pending', attempts: 0 }));
    await settled(created.id, 'sent');
    await t.admin.post(`/api/v1/admin/mail/${row.id}/retry`).expect(409);
    await t.admin.post(`/api/v1/admin/mail/999999999/retry`).expect(404);
    // The retry is audited with the reopening (the refused ones are not), and told to webhooks like any audited action.
    const audited = await t.sql<{ actor_type: string; license_id: number; product_code: string; details: Record<string, unknown> }>(
      `SELECT actor_type, license_id, product_code, details FROM audit_entries WHERE action = 'mail.retried' AND license_id = $1`,
      [created.id],
    );
    expect(audited).toEqual([
      {
        actor_type: 'admin_api',
        license_id: created.id,
        product_code: 'POS_RETAIL',
        details: { mail_id: Number(row.id), kind: 'license_issued', to: 'gone@shop.example', last_error: expect.stringMatching(/550/) },
      },
    ]);
  });

  it('reminders carry List-Unsubscribe on PUBLIC_URL (one click); after it, reminders to the address stop', async () => {
    const created = await createLicense(t, { customer_email: 'reader@shop.example' });
    await remind(created.id, 2 * DAY);
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes('reader@shop.example'));
    expect(mail.parsed.subject).toMatch(/^Your Retail Point of Sale licence expires on /);
    expect(headerLines(mail.raw)).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    const link = /<(https:\/\/licences\.example\.test\/mail\/unsubscribe\?[^>]+)>/.exec(
      headerLines(mail.raw).join(' ').replace(/\s+/g, ''),
    )?.[1];
    expect(link).toBeDefined();
    expect(mail.parsed.text).toContain(link as string);
    const path = (link as string).slice('https://licences.example.test'.length);

    // A forged token changes nothing; GET (a link scanner) only asks.
    await t
      .http()
      .post('/mail/unsubscribe?address=reader%40shop.example&token=forged')
      .expect(200, /not valid/);
    await t
      .http()
      .get(path)
      .expect(200, /Stop reminders/);
    expect(await t.sql('SELECT address FROM mail_unsubscribes')).toEqual([]);
    await t
      .http()
      .post(path)
      .type('form')
      .send('List-Unsubscribe=One-Click')
      .expect(200, /Reminders stopped/);
    expect(await t.sql('SELECT address FROM mail_unsubscribes')).toEqual([{ address: 'reader@shop.example' }]);

    await remind(created.id, -60_000);
    const rows = await settled(created.id);
    expect(rows.map((r) => [r.kind, r.status])).toEqual([
      ['expiring_soon', 'sent'],
      ['expired', 'suppressed'],
    ]);
  });

  it('a token limited to products lists only their mail', async () => {
    const token = (
      await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: 'mail-reader', scopes: ['licenses:read'], products: ['ERP_SUITE'] })
        .expect(201)
    ).body as { token: string };
    await createLicense(t, { customer_email: 'retail@shop.example', notify_customer: true });
    await createLicense(t, { product_code: 'ERP_SUITE', customer_email: 'erp@shop.example', notify_customer: true });
    await fannedOut(t);
    const all = (await t.admin.get('/api/v1/admin/mail?limit=1000').expect(200)).body as Array<{ to: string }>;
    expect(all.some((m) => m.to === 'retail@shop.example')).toBe(true);
    const limited = await t.http().get('/api/v1/admin/mail?limit=1000').set('Authorization', `Bearer ${token.token}`).expect(200);
    expect((limited.body as Array<{ to: string }>).map((m) => m.to)).toEqual(['erp@shop.example']);
    expect(limited.headers['x-total-count']).toBe('1');
    const ids = (await t.sql<{ id: string }>('SELECT id FROM mail_messages LIMIT 1')).map((r) => r.id);
    await t.http().post(`/api/v1/admin/mail/${ids[0]}/retry`).set('Authorization', `Bearer ${token.token}`).expect(403);
  });

  it('1,000 licences expiring in the same hour: each reminder once, whatever passes race', async () => {
    await t.sql(
      `INSERT INTO licenses (product_id, license_key, license_type, customer_name, customer_email, expires_at, grace_days)
       SELECT p.id, 'BULK-' || lpad(g::text, 6, '0'), 'YEARLY', 'Bulk ' || g, 'bulk' || g || '@shop.example', now() + interval '2 days' + g * interval '1 second', 0
       FROM generate_series(1, 1000) g, products p WHERE p.code = 'POS_RETAIL'`,
    );
    const scan = t.app.get(ExpiryScanService);
    const fanout = t.app.get(EventFanoutService);
    const mail = t.app.get(MailService);
    // Two scans, two fan-outs and two senders at once, beside the job engine's own.
    await Promise.all([scan.scanExpiries(), scan.scanExpiries()]);
    for (let pending = 1; pending > 0;) {
      await Promise.all([fanout.fanOutPending(), fanout.fanOutPending()]);
      [{ pending }] = await t.sql<{ pending: number }>('SELECT count(*)::int AS pending FROM event_outbox WHERE fanned_out_at IS NULL');
    }
    const [{ count }] = await t.sql<{ count: number }>(`SELECT count(*)::int AS count FROM mail_messages WHERE to_address LIKE 'bulk%'`);
    expect(count).toBe(1000);
    await Promise.all([mail.sendDue(), mail.sendDue()]);
    // A hang guard sized for a loaded 2-core machine (1,000 SMTP sessions), not a speed goal.
    const bulk = await smtp.waitFor(1000, (m) => m.envelopeTo[0]?.startsWith('bulk'), 180_000);
    expect(new Set(bulk.map((m) => m.envelopeTo[0])).size).toBe(1000);
    expect(bulk).toHaveLength(1000);
    // Nothing left to send twice: every bulk message sent on its one attempt, and no late duplicate arrives.
    await Promise.all([mail.sendDue(), mail.sendDue()]);
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const [{ open }] = await t.sql<{ open: number }>(
        `SELECT count(*)::int AS open FROM mail_messages WHERE to_address LIKE 'bulk%' AND status IN ('pending', 'sending')`,
      );
      if (open === 0) break;
    }
    const states = await t.sql<{ status: string; attempts: number; n: number }>(
      `SELECT status, attempts, count(*)::int AS n FROM mail_messages WHERE to_address LIKE 'bulk%' GROUP BY 1, 2`,
    );
    expect(states).toEqual([{ status: 'sent', attempts: 1, n: 1000 }]);
    expect(smtp.received.filter((m) => m.envelopeTo[0]?.startsWith('bulk'))).toHaveLength(1000);
  }, 300_000);
});

describe('zero configuration: no SMTP_URL writes .eml files under DATA_DIR/mail/ (docs/mail.md)', () => {
  let t: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'licence-mail-'));
    t = await createTestApp({ dataDir });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creating a licence with notify_customer: true writes its license_issued message', async () => {
    const created = await createLicense(t, { customer_email: 'first@shop.example', notify_customer: true });
    const dir = join(dataDir, 'mail');
    const deadline = Date.now() + 30_000;
    let files: string[] = [];
    while (files.length === 0) {
      await fannedOut(t);
      files = (() => {
        try {
          return readdirSync(dir).filter((f) => f.endsWith('.eml'));
        } catch {
          return [];
        }
      })();
      if (Date.now() > deadline) throw new Error('no .eml written');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(files).toEqual([expect.stringMatching(/^\d{8}-license_issued\.eml$/)]);
    const eml = readFileSync(join(dir, files[0]), 'utf8');
    expect(eml).toMatch(/^To: Test Customer \d+ <first@shop\.example>$/m);
    expect(eml).toContain(created.license_key);
    expect(t.app.get(MailService).writesFiles).toBe(true);
  });
});
