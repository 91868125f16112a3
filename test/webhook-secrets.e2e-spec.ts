import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/app.setup';
import { dataSourceOptions, MIGRATIONS } from '../src/database/data-source-options';
import { runMigrations } from '../src/database/migrate';
import { WebhookSecretsEncrypted1796610000000 } from '../src/database/migrations/1796610000000-webhook-secrets-encrypted';
import { createLicense } from './support/factories';
import { createTestApp, TEST_API_KEY, TestApp, testConfig } from './support/test-app';
import { dropDatabase, ENV_ADMIN_URL, newDatabaseName, urlFor, withAdminClient } from './support/test-database';
import { ReceivedWebhook, startReceiver } from './support/webhook-receiver';

// Deliveries go through the job engine and real HTTP, with 1 s retries: give them time on a loaded machine.
jest.setTimeout(60_000);

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
type Sql = <T>(query: string, params?: unknown[]) => Promise<T[]>;

const verify = (secret: string, hook: ReceivedWebhook) =>
  new Webhook(secret).verify(hook.body, {
    'webhook-id': String(hook.headers['webhook-id']),
    'webhook-timestamp': String(hook.headers['webhook-timestamp']),
    'webhook-signature': String(hook.headers['webhook-signature']),
  });
const about = (licenseId: number) => (hook: ReceivedWebhook) => (JSON.parse(hook.body) as { data: { id?: number } }).data.id === licenseId;

/** Every text form of a secret a dump could show: the whole value, the base64 of its bytes, and the bytes as base64url and hex. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return [secret, secret.slice('whsec_'.length), bytes.toString('base64url'), bytes.toString('hex')];
}

/** Reads the whole row as PostgreSQL prints it (every column) and checks that no form of `secret` is in it. */
async function expectSealed(sql: Sql, endpointId: number, secret: string): Promise<void> {
  const [row] = await sql<{ whole: string; secret: string }>(`SELECT t::text AS whole, t.secret FROM webhook_endpoints t WHERE id = $1`, [
    endpointId,
  ]);
  expect(row.secret).toMatch(/^v1\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+){3}$/);
  for (const form of formsOf(secret)) {
    expect(row.whole).not.toContain(form);
    expect(row.whole).not.toContain(form.slice(0, 16));
  }
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('webhook secrets encrypted at rest (docs/webhooks.md, "Secrets at rest")', () => {
  let t: TestApp;
  let receiver: Receiver;
  let other: Receiver;

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await startReceiver();
    other = await startReceiver();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await other?.close();
  });
  afterEach(async () => {
    await t.sql('DELETE FROM webhook_endpoints');
  });

  async function endpoint(url: string, events = ['license.created']) {
    const res = await t.admin.post('/api/v1/admin/webhooks').send({ url, events }).expect(201);
    return res.body as { id: number; secret: string };
  }

  it('a new and a rotated secret are stored sealed: the row holds neither the secret nor the base64 of its bytes', async () => {
    const created = await endpoint(receiver.url);
    await expectSealed(t.sql, created.id, created.secret);
    const rotated = (await t.admin.post(`/api/v1/admin/webhooks/${created.id}/rotate-secret`).send({}).expect(200)).body as {
      secret: string;
    };
    await expectSealed(t.sql, created.id, rotated.secret);
    await expectSealed(t.sql, created.id, created.secret);
    const [{ plain }] = await t.sql<{ plain: number }>(`SELECT count(*)::int AS plain FROM webhook_endpoints WHERE secret LIKE 'whsec%'`);
    expect(plain).toBe(0);
  });

  it('deliveries verify with the secret shown at creation, and after rotate-secret with the new one only', async () => {
    const created = await endpoint(receiver.url);
    const first = await createLicense(t);
    const [before] = await receiver.waitFor(1, about(first.id));
    expect(() => verify(created.secret, before)).not.toThrow();

    const rotated = (await t.admin.post(`/api/v1/admin/webhooks/${created.id}/rotate-secret`).send({}).expect(200)).body as {
      secret: string;
    };
    const second = await createLicense(t);
    const [after] = await receiver.waitFor(1, about(second.id));
    expect(() => verify(rotated.secret, after)).not.toThrow();
    expect(() => verify(created.secret, after)).toThrow();
  });

  it('attacker: a ciphertext copied to another endpoint row signs nothing there; its delivery fails with a reason, the others go on', async () => {
    const victim = await endpoint(receiver.url);
    const target = await endpoint(other.url);
    // Someone with write access to the table makes the target sign with the victim's secret.
    await t.sql(`UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = $1) WHERE id = $2`, [
      victim.id,
      target.id,
    ]);
    const lic = await createLicense(t);
    const [hook] = await receiver.waitFor(1, about(lic.id));
    expect(() => verify(victim.secret, hook)).not.toThrow();

    // Test retry schedule [1, 1]: three attempts, then `failed`, each refused before any request was made.
    const deliveries = () =>
      t.admin
        .get(`/api/v1/admin/webhooks/${target.id}/deliveries`)
        .expect(200)
        .then((res) => res.body as { status: string; attempts: number; last_error: string | null; last_status_code: number | null }[]);
    const [failed] = await waitFor(deliveries, (rows) => rows[0]?.status === 'failed', 'the copied-secret delivery');
    expect(failed).toMatchObject({ attempts: 3, last_status_code: null, last_error: expect.stringContaining('cannot be decrypted') });
    expect(other.received).toHaveLength(0);
    await t.http().get('/api/v1/health').expect(200);

    // The remedy the error names: a rotation seals a fresh secret to this row, and deliveries verify again.
    const rotated = (await t.admin.post(`/api/v1/admin/webhooks/${target.id}/rotate-secret`).send({}).expect(200)).body as {
      secret: string;
    };
    const next = await createLicense(t);
    const [recovered] = await other.waitFor(1, about(next.id));
    expect(() => verify(rotated.secret, recovered)).not.toThrow();
  });

  it('a plain secret written after start-up (a not yet upgraded instance) signs its first delivery and is sealed by it', async () => {
    const plain = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const [{ id }] = await t.sql<{ id: number }>(
      `INSERT INTO webhook_endpoints (url, events, secret) VALUES ($1, ARRAY['license.created'], $2) RETURNING id`,
      [receiver.url, plain],
    );
    const lic = await createLicense(t);
    const [hook] = await receiver.waitFor(1, about(lic.id));
    expect(() => verify(plain, hook)).not.toThrow();
    await expectSealed(t.sql, id, plain);
  });
});

describe('upgrade: secrets stored in plain text by the previous version', () => {
  const adminUrl = process.env[ENV_ADMIN_URL] as string;
  const databaseName = newDatabaseName('upgrade');
  const databaseUrl = urlFor(adminUrl, databaseName);
  const plain = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
  let app: INestApplication | undefined;
  let receiver: Receiver;
  let legacyId: number;

  beforeAll(async () => {
    receiver = await startReceiver();
    await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE "${databaseName}"`));
    // The schema as the previous version left it: every migration before this one.
    const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(WebhookSecretsEncrypted1796610000000));
    const old = await new DataSource({ ...dataSourceOptions(databaseUrl, 2), migrations: before }).initialize();
    try {
      await old.runMigrations({ transaction: 'each' });
      const [row] = await old.query<{ id: number }[]>(
        `INSERT INTO webhook_endpoints (url, events, secret) VALUES ($1, ARRAY['*'], $2) RETURNING id`,
        [receiver.url, plain],
      );
      legacyId = row.id;
    } finally {
      await old.destroy();
    }
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
    await dropDatabase(adminUrl, databaseName);
  });

  const sql: Sql = (query, params) => (app as INestApplication).get<DataSource>(getDataSourceToken()).query(query, params);

  it('the upgrade (migrations, then the start) leaves no plain secret, and the receiver keeps its secret', async () => {
    expect(await runMigrations(databaseUrl)).toContain('WebhookSecretsEncrypted1796610000000');
    const config = testConfig(databaseUrl);
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile();
    app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
    await configureApp(app, config);
    await app.init();

    // Sealed at start-up, before any delivery needed it.
    await expectSealed(sql, legacyId, plain);
    const [{ plainRows }] = await sql<{ plainRows: number }>(
      `SELECT count(*)::int AS "plainRows" FROM webhook_endpoints WHERE secret LIKE 'whsec%'`,
    );
    expect(plainRows).toBe(0);

    // Any change is an event for an endpoint subscribed to "*": here, its own description.
    await request(app.getHttpServer() as Server)
      .put(`/api/v1/admin/webhooks/${legacyId}`)
      .set('X-API-Key', TEST_API_KEY)
      .send({ description: 'after the upgrade' })
      .expect(200);
    const [hook] = await receiver.waitFor(1, (h) => h.body.includes('"webhook.updated"'));
    expect(() => verify(plain, hook)).not.toThrow();
  });

  it('the migration cannot be reverted over sealed secrets (nothing could read them): it refuses instead', async () => {
    const runner = (app as INestApplication).get<DataSource>(getDataSourceToken()).createQueryRunner();
    try {
      await expect(new WebhookSecretsEncrypted1796610000000().down(runner)).rejects.toThrow(/encrypted secret/);
    } finally {
      await runner.release();
    }
  });
});
