import { MailService } from '../src/mail/mail.service';
import { EventFanoutService } from '../src/events/event-fanout.service';
import { ExpiryScanService } from '../src/licenses/expiry-scan.service';
import { startSmtpServer } from './support/smtp-server';
import { createSecondInstance, createTestApp, TestApp } from './support/test-app';

// Two servers of one deployment share the outbox: 1,000 reminders, each sent once (docs/mail.md, Retries).
jest.setTimeout(120_000);

type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;

describe('customer e-mail across two instances on one database', () => {
  let first: TestApp;
  let second: TestApp;
  let smtp: Smtp;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    first = await createTestApp({
      mail: { smtpUrl: smtp.url, from: 'keys@vendor.example', brandName: 'Vendor Soft', disabledKinds: [], retryScheduleSeconds: [1, 1] },
    });
    second = await createSecondInstance(first);
  }, 60_000);
  afterAll(async () => {
    await second.close();
    await first.close();
    await smtp.close();
  });

  it('1,000 licences expiring in the same hour: every reminder written once and sent once, whichever instance takes it', async () => {
    await first.sql(
      `INSERT INTO licenses (product_id, license_key, license_type, customer_name, customer_email, expires_at, grace_days)
       SELECT p.id, 'TWIN-' || lpad(g::text, 6, '0'), 'YEARLY', 'Twin ' || g, 'twin' || g || '@shop.example', now() + interval '2 days' + g * interval '1 second', 0
       FROM generate_series(1, 1000) g, products p WHERE p.code = 'POS_RETAIL'`,
    );
    const instances = [first, second];
    // Each instance scans, fans out and sends at once, beside both job engines doing the same on their own.
    await Promise.all(instances.map((t) => t.app.get(ExpiryScanService).scanExpiries()));
    for (let pending = 1; pending > 0;) {
      await Promise.all(instances.map((t) => t.app.get(EventFanoutService).fanOutPending()));
      [{ pending }] = await first.sql<{ pending: number }>('SELECT count(*)::int AS pending FROM event_outbox WHERE fanned_out_at IS NULL');
    }
    const [{ written }] = await first.sql<{ written: number }>(
      `SELECT count(*)::int AS written FROM mail_messages WHERE to_address LIKE 'twin%'`,
    );
    expect(written).toBe(1000);
    await Promise.all(instances.map((t) => t.app.get(MailService).sendDue()));
    // Hang guards sized for a loaded 2-core machine (1,000 SMTP sessions from two instances), not speed goals.
    const arrived = await smtp.waitFor(1000, (m) => m.envelopeTo[0]?.startsWith('twin'), 240_000);
    expect(new Set(arrived.map((m) => m.envelopeTo[0])).size).toBe(1000);

    await Promise.all(instances.map((t) => t.app.get(MailService).sendDue()));
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const [{ open }] = await first.sql<{ open: number }>(
        `SELECT count(*)::int AS open FROM mail_messages WHERE to_address LIKE 'twin%' AND status IN ('pending', 'sending')`,
      );
      if (open === 0) break;
    }
    expect(
      await first.sql(`SELECT status, attempts, count(*)::int AS n FROM mail_messages WHERE to_address LIKE 'twin%' GROUP BY 1, 2`),
    ).toEqual([{ status: 'sent', attempts: 1, n: 1000 }]);
    expect(smtp.received.filter((m) => m.envelopeTo[0]?.startsWith('twin'))).toHaveLength(1000);
  }, 360_000);
});
