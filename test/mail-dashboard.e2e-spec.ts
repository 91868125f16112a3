import { Agent, flashOf, loggedInAgent, postForm } from './dashboard-helpers';
import { createLicense, fannedOut } from './support/factories';
import { startSmtpServer } from './support/smtp-server';
import { createTestApp, TestApp } from './support/test-app';

// Messages go through the fan-out, the job engine and a real SMTP server.
jest.setTimeout(60_000);

type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;

describe('dashboard: customer e-mail (docs/mail.md)', () => {
  let t: TestApp;
  let smtp: Smtp;
  let agent: Agent;
  let token: string;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      mail: { smtpUrl: smtp.url, from: 'keys@vendor.example', brandName: 'Vendor Soft', disabledKinds: [], retryScheduleSeconds: [1] },
    });
    const session = await loggedInAgent(t);
    agent = session.agent;
    token = await session.token('/emails');
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  const flash = (url: string) => flashOf(agent, url);

  it('the new-licence form has the checkbox; checked, the key is mailed', async () => {
    expect((await agent.get('/licenses/new').expect(200)).text).toContain('name="notify_customer"');
    const res = await postForm(agent, token, '/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      customer_name: 'Form Customer',
      customer_email: 'form@shop.example',
      notify_customer: 'on',
    }).expect(303);
    const id = Number(/^\/licenses\/(\d+)$/.exec(String(res.headers.location))?.[1]);
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes('form@shop.example'));
    const [{ license_key }] = await t.sql<{ license_key: string }>('SELECT license_key FROM licenses WHERE id = $1', [id]);
    expect(mail.parsed.text).toContain(license_key);
  });

  it('unchecked, nothing is mailed', async () => {
    const res = await postForm(agent, token, '/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      customer_name: 'Quiet Customer',
      customer_email: 'quiet-form@shop.example',
    }).expect(303);
    const id = Number(/^\/licenses\/(\d+)$/.exec(String(res.headers.location))?.[1]);
    await fannedOut(t);
    expect(await t.sql('SELECT id FROM mail_messages WHERE license_id = $1', [id])).toEqual([]);
  });

  it('"send the key again" on the licence page mails the key again, each click once', async () => {
    const created = await createLicense(t, { customer_email: 'again@shop.example' });
    const page = await agent.get(`/licenses/${created.id}`).expect(200);
    expect(page.text).toContain(`action="/licenses/${created.id}/send-key"`);
    await postForm(agent, token, `/licenses/${created.id}/send-key`).expect(303).expect('Location', `/licenses/${created.id}`);
    expect(await flash(`/licenses/${created.id}`)).toEqual(['success', expect.stringContaining('again@shop.example')]);
    await postForm(agent, token, `/licenses/${created.id}/send-key`).expect(303);
    const mails = await smtp.waitFor(2, (m) => m.envelopeTo.includes('again@shop.example'));
    expect(mails.every((m) => m.parsed.text?.includes(created.license_key))).toBe(true);
    // Each click is audited (license.key_resent, by the signed-in user) and is the cause of its own message.
    const audited = await t.sql<{ action: string; actor_type: string; actor: string; details: { to: string } }>(
      `SELECT action, actor_type, actor, details FROM audit_entries WHERE license_id = $1 AND action = 'license.key_resent' ORDER BY id`,
      [created.id],
    );
    expect(audited).toEqual([
      { action: 'license.key_resent', actor_type: 'dashboard', actor: 'staff:admin', details: { to: 'again@shop.example' } },
      { action: 'license.key_resent', actor_type: 'dashboard', actor: 'staff:admin', details: { to: 'again@shop.example' } },
    ]);
    await fannedOut(t);
    expect(await t.sql(`SELECT kind FROM mail_messages WHERE license_id = $1 AND event_id IS NOT NULL`, [created.id])).toEqual([
      { kind: 'license_issued' },
      { kind: 'license_issued' },
    ]);
    expect((await agent.get(`/licenses/${created.id}`).expect(200)).text).toContain('sent the key of');

    // No address: the action is not offered, and a forged POST is refused with a message.
    const bare = await createLicense(t);
    expect((await agent.get(`/licenses/${bare.id}`).expect(200)).text).not.toContain('/send-key"');
    await postForm(agent, token, `/licenses/${bare.id}/send-key`).expect(303);
    expect(await flash(`/licenses/${bare.id}`)).toEqual(['error', expect.stringContaining('no customer e-mail')]);
    expect(await t.sql(`SELECT id FROM audit_entries WHERE license_id = $1 AND action = 'license.key_resent'`, [bare.id])).toEqual([]);
  });

  it('attacker: send-key needs the CSRF token', async () => {
    const created = await createLicense(t, { customer_email: 'csrf@shop.example' });
    await agent.post(`/licenses/${created.id}/send-key`).type('form').send({}).expect(403);
    await fannedOut(t);
    expect(await t.sql('SELECT id FROM mail_messages WHERE to_address = $1', ['csrf@shop.example'])).toEqual([]);
  });

  it('the mail page lists messages with status and retries a failed one; previews every template', async () => {
    smtp.respond((address) => (address === 'bounce@shop.example' ? 550 : undefined));
    const created = await createLicense(t, { customer_email: 'bounce@shop.example', notify_customer: true });
    let failed: { id: string } | undefined;
    for (const deadline = Date.now() + 20_000; !failed && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      await fannedOut(t);
      [failed] = await t.sql<{ id: string }>(`SELECT id FROM mail_messages WHERE license_id = $1 AND status = 'failed'`, [created.id]);
    }
    const list = await agent.get('/emails').expect(200);
    expect(list.text).toContain('bounce@shop.example');
    expect(list.text).toContain('data-testid="mail-status">failed');
    expect(list.text).toContain(`action="/emails/${failed?.id}/retry"`);
    expect(list.text).not.toContain('data-testid="mail-not-configured"');

    smtp.respond(() => undefined);
    await postForm(agent, token, `/emails/${failed?.id}/retry`).expect(303).expect('Location', '/emails');
    await smtp.waitFor(1, (m) => m.envelopeTo.includes('bounce@shop.example'));
    expect(
      await t.sql(`SELECT actor_type, actor, license_id, product_code, details FROM audit_entries WHERE action = 'mail.retried'`),
    ).toEqual([
      {
        actor_type: 'dashboard',
        actor: 'staff:admin',
        license_id: created.id,
        product_code: 'POS_RETAIL',
        details: expect.objectContaining({ mail_id: Number(failed?.id), kind: 'license_issued', to: 'bounce@shop.example' }),
      },
    ]);
    await postForm(agent, token, '/emails/999999/retry').expect(404);

    for (const kind of ['license_issued', 'expiring_soon', 'expired', 'seat_released', 'portal_sign_in']) {
      const preview = await agent.get(`/emails/preview/${kind}`).expect(200);
      expect(preview.text).toContain('data-testid="preview-subject"');
      const html = await agent.get(`/emails/preview/${kind}/html`).expect(200);
      expect(html.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      expect(html.text).toContain('Vendor Soft');
    }
    expect((await agent.get('/emails/preview/license_issued').expect(200)).text).toContain('Đorđe Petrović');
    await agent.get('/emails/preview/marketing').expect(404);
  });

  it('attacker: the mail page needs a signed-in session', async () => {
    const res = await t.http().get('/emails');
    expect(res.status).toBe(302);
  });
});
