import { Webhook } from 'standardwebhooks';
import { Agent, csrfFrom, flashOf, loggedInAgent, postForm } from './dashboard-helpers';
import { createLicense } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { ReceivedWebhook, startReceiver } from './support/webhook-receiver';

// Deliveries go through the job engine and real HTTP with 1 s retries.
jest.setTimeout(60_000);

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const secretOn = (html: string) => /data-testid="webhook-secret" value="(whsec_[^"]+)"/.exec(html.replace(/&#x3D;/g, '='))?.[1];
const verify = (secret: string, hook: ReceivedWebhook) =>
  new Webhook(secret).verify(hook.body, {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  });

describe('dashboard: webhooks page', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await startReceiver();
    const session = await loggedInAgent(t);
    agent = session.agent;
    token = await session.token('/webhooks');
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => receiver.respond(() => 200));
  afterEach(async () => {
    await t.sql('DELETE FROM webhook_endpoints');
  });

  const flash = (url: string) => flashOf(agent, url);
  const endpointRows = () =>
    t.sql<{ id: number; url: string; events: string[]; active: boolean; secret: string }>('SELECT * FROM webhook_endpoints');
  async function createViaForm(fields: Record<string, string | string[]>) {
    const res = await postForm(agent, token, '/webhooks', fields).expect(201);
    const rows = await endpointRows();
    return { res, secret: secretOn(res.text), row: rows[rows.length - 1] };
  }

  it('is in the navigation and lists endpoints with url, events, status and creation time; the form offers every event type', async () => {
    await t.admin
      .post('/api/v1/admin/webhooks')
      .send({ url: receiver.url, events: ['license.revoked'], description: 'CRM' })
      .expect(201);
    const res = await agent.get('/webhooks').expect(200);
    expect(res.text).toContain('<a href="/webhooks" aria-current="page">Webhooks</a>');
    expect(res.text.match(/data-testid="endpoint-row"/g)).toHaveLength(1);
    expect(res.text).toContain(receiver.url);
    expect(res.text).toContain('license.revoked');
    expect(res.text).toContain('CRM');
    expect(res.text).toContain('badge-active">active');
    expect(res.text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect(res.text).toContain('name="events" value="*"');
    for (const type of ['license.created', 'license.activated', 'license.expiring_soon', 'license.expired'])
      expect(res.text).toContain(`name="events" value="${type}"`);
    expect(res.text).not.toContain('name="events" value="auth.');
    expect(res.text).not.toContain('whsec_');
  });

  it('needs a session: anonymous visitors go to the login page', async () => {
    await t.http().get('/webhooks').expect(302).expect('Location', '/login');
  });

  it('creates an endpoint, shows its secret once (the one that signs deliveries) and audits it as the dashboard user', async () => {
    const { res, secret, row } = await createViaForm({
      url: receiver.url,
      events: ['license.created', 'license.revoked'],
      description: 'Billing',
    });
    expect(secret).toMatch(/^whsec_/);
    expect(row).toMatchObject({ url: receiver.url, events: ['license.created', 'license.revoked'], active: true });
    // Stored sealed under KEYRING_SECRET (docs/webhooks.md, "Secrets at rest"), never as shown.
    expect(row.secret).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(secret!.slice('whsec_'.length));
    expect(res.text).toContain('shown only now');
    expect(res.headers['cache-control']).toBe('no-store');
    // Never again: neither the list nor the endpoint's page carries it.
    expect((await agent.get('/webhooks').expect(200)).text).not.toContain(secret);
    expect((await agent.get(`/webhooks/${row.id}`).expect(200)).text).not.toContain(secret);
    const audit = (await t.sql(`SELECT actor_type, actor FROM audit_entries WHERE action = 'webhook.created' ORDER BY id DESC LIMIT 1`))[0];
    expect(audit).toEqual({ actor_type: 'dashboard', actor: 'staff:admin' });

    await createLicense(t);
    const [hook] = await receiver.waitFor(1, (h) => h.body.includes('"license.created"'));
    expect(() => verify(secret!, hook)).not.toThrow();
  });

  it('"all events" subscribes to ["*"] whatever else is ticked', async () => {
    const { row } = await createViaForm({ url: receiver.url, events: ['*', 'license.created'] });
    expect(row.events).toEqual(['*']);
    const page = await agent.get(`/webhooks/${row.id}`).expect(200);
    expect(page.text).toContain('all events');
    // Staff make endpoints for every product; one made by a limited token shows its products.
    expect(page.text).toContain('every product');
    const [pos] = await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'POS_RETAIL'`);
    await t.sql(`UPDATE webhook_endpoints SET product_ids = $1 WHERE id = $2`, [[pos.id], row.id]);
    const limited = await agent.get(`/webhooks/${row.id}`).expect(200);
    expect(limited.text).toContain('<span class="badge badge-neutral">POS_RETAIL</span>');
    expect(limited.text).not.toContain('every product');
  });

  it('rejects a form without events, with a bad URL or with an unknown event: 400 with the reason and the typed values kept', async () => {
    const noEvents = await postForm(agent, token, '/webhooks', { url: receiver.url, description: 'kept text' }).expect(400);
    // Summary, message beside the field, input kept (docs/dashboard.md, Forms).
    expect(noEvents.text).toContain('<a href="#field-events">Tick at least one event</a>');
    expect(noEvents.text).toContain('<div class="field-error" id="field-events-error">Tick at least one event');
    expect(noEvents.text).toMatch(/<fieldset id="field-events" class="invalid" aria-describedby="field-events-error">/);
    expect(noEvents.text).not.toContain('must contain at least 1 elements');
    expect(noEvents.text).toContain('value="kept text"');
    const badUrl = await postForm(agent, token, '/webhooks', { url: 'ftp://example.com/x', events: ['license.created'] }).expect(400);
    expect(badUrl.text).toMatch(/<div class="field-error" id="field-url-error">[^<]+/);
    expect(badUrl.text).toMatch(/id="field-url"[^>]*aria-invalid="true"/);
    expect(badUrl.text).toContain('value="ftp://example.com/x"');
    expect(badUrl.text).toContain('name="events" value="license.created" checked');
    await postForm(agent, token, '/webhooks', { url: receiver.url, events: ['auth.login'] }).expect(400);
    expect(await endpointRows()).toHaveLength(0);
  });

  it('reports every error of the form at once: the URL’s own check beside the events and the description', async () => {
    const res = await postForm(agent, token, '/webhooks', { url: 'ftp://example.com/x', description: 'd'.repeat(501) }).expect(400);
    for (const field of ['url', 'events', 'description']) expect(res.text).toContain(`<a href="#field-${field}">`);
    expect(res.text).toMatch(/<div class="field-error" id="field-url-error">[^<]+/);
    expect(res.text).toMatch(/<div class="field-error" id="field-events-error">Tick at least one event/);
    expect(res.text).toMatch(/<div class="field-error" id="field-description-error">[^<]+/);
    expect(res.text).toContain('value="ftp://example.com/x"');
    // Corrected in one go, it is created.
    await postForm(agent, token, '/webhooks', { url: receiver.url, events: ['license.created'], description: 'fixed' }).expect(201);
    expect(await endpointRows()).toHaveLength(1);
  });

  it('refuses every POST without the session CSRF token', async () => {
    await agent.post('/webhooks').type('form').send({ url: receiver.url, events: 'license.created' }).expect(403);
    const { row } = await createViaForm({ url: receiver.url, events: ['license.created'] });
    for (const action of ['deactivate', 'activate', 'rotate-secret', 'delete'])
      await agent.post(`/webhooks/${row.id}/${action}`).type('form').send({ _csrf: 'forged' }).expect(403);
    expect(await endpointRows()).toEqual([expect.objectContaining({ id: row.id, active: true, secret: row.secret })]);
  });

  it('deactivates and activates an endpoint; an inactive one receives nothing', async () => {
    const { row } = await createViaForm({ url: receiver.url, events: ['license.created'] });
    await postForm(agent, token, `/webhooks/${row.id}/deactivate`).expect(303).expect('Location', `/webhooks/${row.id}`);
    expect(await flash(`/webhooks/${row.id}`)).toEqual(['success', expect.stringContaining('deactivated')]);
    expect((await endpointRows())[0].active).toBe(false);
    expect((await agent.get('/webhooks').expect(200)).text).toContain('inactive');
    const before = receiver.received.length;
    await createLicense(t);
    expect(await t.sql(`SELECT id FROM webhook_deliveries WHERE endpoint_id = $1`, [row.id])).toHaveLength(0);
    await postForm(agent, token, `/webhooks/${row.id}/activate`).expect(303);
    expect((await endpointRows())[0].active).toBe(true);
    await createLicense(t);
    await receiver.waitFor(before + 1);
  });

  it('rotates the secret, shows the new one once, and deliveries are signed with it', async () => {
    const { row, secret: old } = await createViaForm({ url: receiver.url, events: ['license.created'] });
    const res = await postForm(agent, token, `/webhooks/${row.id}/rotate-secret`).expect(200);
    const secret = secretOn(res.text);
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(old);
    expect(res.text).toContain('class="flash flash-success" role="status">Secret rotated');
    // The row holds the new secret sealed, not as shown; the deliveries below prove it is the one that signs.
    expect((await endpointRows())[0].secret).not.toContain(secret!.slice('whsec_'.length));
    const before = receiver.received.length;
    await createLicense(t);
    const hook = (await receiver.waitFor(before + 1))[before];
    expect(() => verify(secret!, hook)).not.toThrow();
    expect(() => verify(old!, hook)).toThrow();
  });

  it('deletes only after the confirmation page; unknown ids are the not-found page', async () => {
    const { row } = await createViaForm({ url: receiver.url, events: ['license.created'] });
    const confirm = await agent.get(`/webhooks/${row.id}/delete`).expect(200);
    expect(confirm.text).toContain('data-testid="delete-form"');
    expect(confirm.text).toContain(`action="/webhooks/${row.id}/delete"`);
    expect(await endpointRows()).toHaveLength(1);
    await postForm(agent, token, `/webhooks/${row.id}/delete`, { _csrf: csrfFrom(confirm.text) })
      .expect(303)
      .expect('Location', '/webhooks');
    expect(await endpointRows()).toHaveLength(0);
    expect(await flash('/webhooks')).toEqual(['success', expect.stringContaining('deleted')]);
    await agent.get(`/webhooks/${row.id}`).expect(404);
    await agent.get('/webhooks/abc').expect(404);
    await postForm(agent, token, `/webhooks/${row.id}/delete`).expect(404);
    await postForm(agent, token, '/webhooks/99999/rotate-secret').expect(404);
  });

  it('shows recent deliveries with status, attempts, last code and error; Retry sends a failed one again', async () => {
    receiver.respond(() => 503);
    const { row } = await createViaForm({ url: receiver.url, events: ['license.created'] });
    await createLicense(t);
    let failedId = 0;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && !failedId; await new Promise((r) => setTimeout(r, 200))) {
      const [d] = await t.sql<{ id: string; status: string }>('SELECT id, status FROM webhook_deliveries WHERE endpoint_id = $1', [row.id]);
      if (d?.status === 'failed') failedId = Number(d.id);
    }
    expect(failedId).toBeGreaterThan(0);
    const page = await agent.get(`/webhooks/${row.id}`).expect(200);
    expect(page.text.match(/data-testid="delivery-row"/g)).toHaveLength(1);
    expect(page.text).toContain('data-testid="delivery-status">failed');
    expect(page.text).toContain('<td data-label="Attempts">3</td>');
    expect(page.text).toContain('<td data-label="Last code">503</td>');
    expect(page.text).toContain('HTTP 503');
    expect(page.text).toContain(`action="/webhooks/${row.id}/deliveries/${failedId}/retry"`);

    receiver.respond(() => 200);
    const before = receiver.received.length;
    await postForm(agent, token, `/webhooks/${row.id}/deliveries/${failedId}/retry`).expect(303).expect('Location', `/webhooks/${row.id}`);
    expect(await flash(`/webhooks/${row.id}`)).toEqual(['success', expect.stringContaining('queued again')]);
    await receiver.waitFor(before + 1);
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const [d] = await t.sql<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [failedId]);
      if (d.status === 'delivered') break;
    }
    const delivered = await agent.get(`/webhooks/${row.id}`).expect(200);
    expect(delivered.text).toContain('data-testid="delivery-status">delivered');
    expect(delivered.text).not.toContain('/retry"');

    // A delivered one cannot be retried: the service's refusal is the message; unknown deliveries are 404.
    await postForm(agent, token, `/webhooks/${row.id}/deliveries/${failedId}/retry`).expect(303);
    expect(await flash(`/webhooks/${row.id}`)).toEqual(['error', expect.stringContaining('Only a failed delivery')]);
    await postForm(agent, token, `/webhooks/${row.id}/deliveries/999999/retry`).expect(404);
    await postForm(agent, token, `/webhooks/${row.id}/deliveries/x1/retry`).expect(404);
  });
});
