import { Webhook } from 'standardwebhooks';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';
import { ExpiryScanService } from '../src/licenses/expiry-scan.service';
import { WebhookDrain } from '../src/webhooks/webhook-drain';
import { createLicense, fingerprint, setLicenseExpiry } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { ReceivedWebhook, startReceiver } from './support/webhook-receiver';

// Deliveries go through the job engine and real HTTP, with 1 s retries: give them time on a loaded machine.
jest.setTimeout(60_000);

const DAY = 86_400_000;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const typeOf = (hook: ReceivedWebhook) => (JSON.parse(hook.body) as { type: string }).type;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the received JSON is checked field by field by the tests
const bodyOf = (hook: ReceivedWebhook) => JSON.parse(hook.body) as { type: string; timestamp: string; data: Record<string, any> };

describe('webhooks (docs/webhooks.md)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => receiver.respond(() => 200));
  afterEach(async () => {
    await t.sql('DELETE FROM webhook_endpoints');
  });

  async function endpoint(events: string[], extra: Record<string, unknown> = {}) {
    const res = await t.admin
      .post('/api/v1/admin/webhooks')
      .send({ url: receiver.url, events, ...extra })
      .expect(201);
    return res.body as { id: number; secret: string; url: string; events: string[]; active: boolean };
  }
  const verify = (secret: string, hook: ReceivedWebhook) =>
    new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    });
  const deliveriesOf = async (id: number) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- delivery rows as the API answers them, checked by the tests
    (await t.admin.get(`/api/v1/admin/webhooks/${id}/deliveries`).expect(200)).body as Array<Record<string, any>>;
  const deleteEndpoint = (id: number) => t.http().delete(`/api/v1/admin/webhooks/${id}`).set('X-API-Key', t.config.apiKeys[0]).expect(204);

  it('creates an endpoint with a whsec_ secret shown once; lists and reads it without the secret', async () => {
    const created = await endpoint(['license.created'], { description: 'CRM' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    const one = (await t.admin.get(`/api/v1/admin/webhooks/${created.id}`).expect(200)).body;
    expect(one).toEqual({
      id: created.id,
      url: receiver.url,
      events: ['license.created'],
      description: 'CRM',
      active: true,
      products: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const list = (await t.admin.get('/api/v1/admin/webhooks').expect(200)).body as unknown[];
    expect(JSON.stringify(list)).not.toContain('whsec_');
    await deleteEndpoint(created.id);
  });

  it('every licence and product event arrives with a body and signature standardwebhooks verifies', async () => {
    const hook = await endpoint(['*']);
    const start = receiver.received.length;
    const product = (
      await t.admin.post('/api/v1/admin/products').send({ code: 'HOOK_TEST', name: 'Hook test', key_prefix: 'HOOK' }).expect(201)
    ).body;
    await t.admin.put(`/api/v1/admin/products/${product.id}`).send({ name: 'Hook test 2' }).expect(200);
    const lic = await createLicense(t);
    await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ notes: 'changed' }).expect(200);
    const fp = fingerprint('hook-machine');
    await t.http().post('/api/v1/activate').send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'h' }).expect(200);
    await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('other'), hostname: 'o' })
      .expect(400);
    await t.http().post('/api/v1/deactivate').send({ license_key: lic.license_key, machine_fingerprint: fp }).expect(200);
    await t.http().post('/api/v1/activate').send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'h' }).expect(200);
    await t.admin.post(`/api/v1/admin/licenses/${lic.id}/release`).send({}).expect(200);
    await t.admin.post(`/api/v1/admin/licenses/${lic.id}/revoke`).send({ reason: 'refund' }).expect(200);

    const expected = [
      'webhook.created',
      'product.created',
      'product.updated',
      'license.created',
      'license.updated',
      'license.activated',
      'license.activation_denied',
      'license.deactivated',
      'license.activated',
      'license.released',
      'license.revoked',
    ];
    const hooks = (await receiver.waitFor(start + expected.length)).slice(start);
    expect(hooks.map(typeOf).sort()).toEqual([...expected].sort());
    for (const h of hooks) {
      expect(() => verify(hook.secret, h)).not.toThrow();
      expect(h.headers['content-type']).toBe('application/json');
      expect(h.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      const body = bodyOf(h);
      expect(Object.keys(body).sort()).toEqual(['data', 'timestamp', 'type']);
    }
    const revoked = bodyOf(hooks.find((h) => typeOf(h) === 'license.revoked') as ReceivedWebhook);
    expect(revoked.data).toMatchObject({
      id: lic.id,
      license_key: lic.license_key,
      status: 'revoked',
      revoke_reason: 'refund',
      product: { code: 'POS_RETAIL' },
    });
    expect(revoked.data.event).toMatchObject({ actor_type: 'admin_api' });
    const denied = bodyOf(hooks.find((h) => typeOf(h) === 'license.activation_denied') as ReceivedWebhook);
    expect(denied.data.event.details.code).toBe('ALREADY_ACTIVATED');
    // A tampered body fails verification.
    expect(() => verify(hook.secret, { ...hooks[0], body: hooks[0].body.replace('"type"', '"typo"') })).toThrow();
    await deleteEndpoint(hook.id);
  });

  it('an endpoint receives only the events it subscribed to; an inactive endpoint receives nothing', async () => {
    const onlyRevoked = await endpoint(['license.revoked']);
    const inactive = await endpoint(['*'], { active: false });
    const lic = await createLicense(t);
    await t.admin.post(`/api/v1/admin/licenses/${lic.id}/revoke`).send({ reason: 'x' }).expect(200);
    await receiver.waitFor(1, (h) => typeOf(h) === 'license.revoked' && bodyOf(h).data.id === lic.id);
    await new Promise((r) => setTimeout(r, 1500));
    const about = receiver.received.filter((h) => bodyOf(h).data.id === lic.id);
    expect(about.map(typeOf)).toEqual(['license.revoked']);
    expect(await deliveriesOf(inactive.id)).toEqual([]);
    expect((await deliveriesOf(onlyRevoked.id)).map((d) => d.event_type)).toEqual(['license.revoked']);
    await deleteEndpoint(onlyRevoked.id);
    await deleteEndpoint(inactive.id);
  });

  it('a failed attempt is retried with the same webhook-id until it succeeds', async () => {
    const hook = await endpoint(['license.created']);
    let calls = 0;
    receiver.respond(() => (++calls === 1 ? 500 : 200));
    const lic = await createLicense(t);
    const attempts = await receiver
      .waitFor(2, (h) => bodyOf(h).data.id === lic.id)
      .catch(async (err: Error) => {
        const jobs = await t.sql(
          `SELECT name, state, start_after, data, retry_count, output FROM pgboss.job WHERE name LIKE 'webhook-d%' ORDER BY created_on`,
        );
        const rows = await t.sql(`SELECT * FROM webhook_deliveries`);
        throw new Error(`${err.message} ${JSON.stringify(jobs)} ${JSON.stringify(rows)}`);
      });
    expect(attempts[0].headers['webhook-id']).toBe(attempts[1].headers['webhook-id']);
    expect(() => verify(hook.secret, attempts[1])).not.toThrow();
    await waitForStatus(hook.id, 'delivered');
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, last_status_code: 200, last_error: null, next_attempt_at: null });
    await deleteEndpoint(hook.id);
  });

  async function waitForStatus(endpointId: number, status: string, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [latest] = await deliveriesOf(endpointId);
      if (latest?.status === status) return latest;
      if (Date.now() > deadline) {
        const jobs = await t.sql(
          `SELECT name, state, start_after, data, retry_count, output FROM pgboss.job WHERE name LIKE 'webhook%' ORDER BY created_on`,
        );
        throw new Error(`delivery still ${JSON.stringify(latest)} ${JSON.stringify(jobs)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('after the last retry a delivery is failed; a manual retry sends it again and delivers', async () => {
    const hook = await endpoint(['license.created']);
    receiver.respond(() => 503);
    const lic = await createLicense(t);
    const failed = await waitForStatus(hook.id, 'failed');
    expect(failed).toMatchObject({ attempts: 3, last_status_code: 503, last_error: expect.stringContaining('HTTP 503') });
    const sent = receiver.received.filter((h) => bodyOf(h).data.id === lic.id);
    expect(sent).toHaveLength(3);

    receiver.respond(() => 204);
    const retried = await t.admin.post(`/api/v1/admin/webhook-deliveries/${failed.id}/retry`).send({}).expect(200);
    expect(retried.body.status).toBe('pending');
    await waitForStatus(hook.id, 'delivered');
    const all = receiver.received.filter((h) => bodyOf(h).data.id === lic.id);
    expect(new Set(all.map((h) => h.headers['webhook-id'])).size).toBe(1);

    const again = await t.admin.post(`/api/v1/admin/webhook-deliveries/${failed.id}/retry`).send({}).expect(409);
    expect(again.body.error.code).toBe('CONFLICT');
    await t.admin.post('/api/v1/admin/webhook-deliveries/999999/retry').send({}).expect(404);
    await deleteEndpoint(hook.id);
  });

  it('rotate-secret: later deliveries verify with the new secret only', async () => {
    const hook = await endpoint(['license.created']);
    const { secret } = (await t.admin.post(`/api/v1/admin/webhooks/${hook.id}/rotate-secret`).send({}).expect(200)).body;
    expect(secret).not.toBe(hook.secret);
    const lic = await createLicense(t);
    const [delivered] = await receiver.waitFor(1, (h) => bodyOf(h).data.id === lic.id);
    expect(() => verify(secret, delivered)).not.toThrow();
    expect(() => verify(hook.secret, delivered)).toThrow();
    await deleteEndpoint(hook.id);
  });

  it('license.expiring_soon and license.expired fire once per licence and expiry date', async () => {
    const hook = await endpoint(['license.expiring_soon', 'license.expired']);
    const service = t.app.get(ExpiryScanService);
    const soon = await createLicense(t, { expires_at: new Date(Date.now() + 3 * DAY).toISOString() });
    const gone = await createLicense(t);
    await setLicenseExpiry(t, gone.id, new Date(Date.now() - 2 * 3600_000), 0);
    await service.scanExpiries();
    await service.scanExpiries();
    await receiver.waitFor(1, (h) => typeOf(h) === 'license.expiring_soon' && bodyOf(h).data.id === soon.id);
    await receiver.waitFor(1, (h) => typeOf(h) === 'license.expired' && bodyOf(h).data.id === gone.id);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.filter((h) => bodyOf(h).data.id === soon.id).map(typeOf)).toEqual(['license.expiring_soon']);
    expect(receiver.received.filter((h) => bodyOf(h).data.id === gone.id).map(typeOf)).toEqual(['license.expired']);

    // A new expiry date is a new event.
    await t.admin
      .put(`/api/v1/admin/licenses/${soon.id}`)
      .send({ expires_at: new Date(Date.now() + 5 * DAY).toISOString() })
      .expect(200);
    await service.scanExpiries();
    await receiver.waitFor(2, (h) => typeOf(h) === 'license.expiring_soon' && bodyOf(h).data.id === soon.id);
    await deleteEndpoint(hook.id);
  });

  it.each([
    [{ url: 'ftp://example.com/x', events: ['*'] }, 'url'],
    [{ url: 'http://example.com/x', events: [] }, 'events'],
    [{ url: 'http://example.com/x', events: ['license.nope'] }, 'events'],
    [{ url: 'http://example.com/x', events: ['auth.login'] }, 'events'],
    [{ url: 'http://example.com/x', events: ['*', 'license.created'] }, 'events'],
    [{ url: 'http://example.com/x', events: ['license.created', 'license.created'] }, 'events'],
    [{ url: 'http://example.com/x', events: ['*'], secret: 'mine' }, 'secret'],
    [{ events: ['*'] }, 'url'],
  ])('refuses %j (400 naming %s)', async (body, field) => {
    const res = await t.admin.post('/api/v1/admin/webhooks').send(body).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('an attempt is claimed once: ten workers racing for one due delivery, one wins; a late finisher does not overwrite', async () => {
    const hook = await endpoint(['license.created']);
    await createLicense(t);
    const delivered = await waitForStatus(hook.id, 'delivered');
    // As if a crashed sender's lease had run out: pending and due again.
    await t.sql(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() - interval '1 minute' WHERE id = $1`, [
      delivered.id,
    ]);
    const repository = t.app.get(WebhooksRepository);
    const claims = await Promise.all(Array.from({ length: 10 }, () => repository.claimNextDue()));
    const won = claims.filter((c) => c !== null);
    expect(won).toHaveLength(1);
    expect(won[0]?.attempts).toBe(2);
    expect(await repository.claimNextDue()).toBeNull();
    // The finisher of attempt 1 comes back after attempt 2 was claimed: nothing is written.
    const stale = await t.dataSource.transaction((m) =>
      repository.finishAttempt(
        String(delivered.id),
        1,
        { status: 'failed', statusCode: 500, error: 'late', nextAttemptInSeconds: null },
        m,
      ),
    );
    expect(stale).toBe(false);
    const [row] = await t.sql<{ status: string; attempts: number }>(`SELECT status, attempts FROM webhook_deliveries WHERE id = $1`, [
      delivered.id,
    ]);
    expect(row).toEqual({ status: 'pending', attempts: 2 });
    await deleteEndpoint(hook.id);
  });

  it('the sweep sends again a delivery whose sender died (lease over), with the same webhook-id; a held lease is left alone', async () => {
    const drain = t.app.get(WebhookDrain);
    const hook = await endpoint(['license.created']);
    await createLicense(t);
    const delivered = await waitForStatus(hook.id, 'delivered');
    const before = receiver.received.filter((h) => h.headers['webhook-id'] === delivered.event_id).length;
    // Claimed by a process that was killed mid-send: attempts counted, lease still running, no job left.
    await t.sql(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() + interval '20 seconds' WHERE id = $1`, [
      delivered.id,
    ]);
    expect(await drain.deliverDue()).toBe(0);
    await t.sql(`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '10 seconds' WHERE id = $1`, [delivered.id]);
    expect(await drain.deliverDue()).toBe(1);
    await receiver.waitFor(before + 1, (h) => h.headers['webhook-id'] === delivered.event_id);
    const again = await waitForStatus(hook.id, 'delivered');
    expect(again).toMatchObject({ id: delivered.id, status: 'delivered', attempts: 2 });
    await deleteEndpoint(hook.id);
  });

  it('unknown endpoints are 404', async () => {
    await t.admin.get('/api/v1/admin/webhooks/987654').expect(404);
    await t.admin.put('/api/v1/admin/webhooks/987654').send({ active: false }).expect(404);
    await t.admin.get('/api/v1/admin/webhooks/987654/deliveries').expect(404);
  });
});

describe('webhooks: SSRF guard without WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ webhooks: { retryScheduleSeconds: [1], expiringDays: 7, allowPrivateNetworks: false } });
  }, 60_000);
  afterAll(() => t.close());

  it.each([
    'http://127.0.0.1:8080/x',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/x',
    'http://localhost/x',
    'http://10.1.2.3/x',
    'http://[::ffff:192.168.0.1]/x',
  ])('%s is refused at creation', async (url) => {
    const res = await t.admin
      .post('/api/v1/admin/webhooks')
      .send({ url, events: ['*'] })
      .expect(400);
    expect(res.body.error.details.fields[0]).toEqual({ field: 'url', message: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE_NETWORKS') });
  });

  it('and at every send: an endpoint stored before (e.g. when the opt-in was on) gets no request', async () => {
    const receiver = await startReceiver();
    try {
      await t.sql(`INSERT INTO webhook_endpoints (url, events, secret) VALUES ($1, ARRAY['*'], $2)`, [
        receiver.url,
        `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      ]);
      await createLicense(t);
      const deadline = Date.now() + 15_000;
      let row: { status: string; last_error: string } | undefined;
      while (Date.now() < deadline) {
        [row] = await t.sql<{ status: string; last_error: string }>(
          `SELECT status, last_error FROM webhook_deliveries ORDER BY id DESC LIMIT 1`,
        );
        if (row?.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(row).toEqual({ status: 'failed', last_error: expect.stringContaining('127.0.0.1') });
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });
});
