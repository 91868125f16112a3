import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/app.setup';
import { AppConfig } from '../src/config/app-config';
import { ConfigError } from '../src/config/config.error';
import { KeyringService } from '../src/keyring/keyring.service';
import { StoredSigningKey } from '../src/keyring/signing-key.entity';
import { pemOfJwk } from '../src/signing/jwk';
import { keyIdOf, verifySignedLicense } from '../src/signing/license-signature';
import { fieldsOf } from './support/api-errors';
import { createLicense, fingerprint } from './support/factories';
import { createTestApp, TestApp, testConfig } from './support/test-app';
import {
  createDatabaseFromTemplate,
  dropDatabase,
  ENV_ADMIN_URL,
  ENV_SIGNING_KEY,
  ENV_TEMPLATE,
  newDatabaseName,
} from './support/test-database';

// Start-up of the app and RSA key generation (rotations) take seconds on a busy machine.
jest.setTimeout(30_000);

const KEYS = '/api/v1/admin/signing-keys';

interface PublishedKey {
  key_id: string;
  algorithm: string;
  status: string;
  public_key_pem: string;
  created_at: string;
  retired_at: string | null;
}
interface Jwk {
  kty: string;
  kid: string;
  alg: string;
  use: string;
  n: string;
  e: string;
}
interface Signed {
  license: Record<string, unknown> & { key_id: string; signed_at: string };
  signature: string;
}

/** docs/signing.md, The keyring: the keyring, rotation, revocation and the public key endpoints, through the real app. */
describe('signing keys: keyring, rotation, revocation', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  const publishedKeys = async () => (await t.http().get('/api/v1/public-keys').expect(200)).body as { keys: PublishedKey[] };
  const jwks = async () => (await t.http().get('/.well-known/jwks.json').expect(200)).body as { keys: Jwk[] };
  const activate = async (licenseKey: string, fp: string) =>
    (await t.http().post('/api/v1/activate').send({ license_key: licenseKey, machine_fingerprint: fp, hostname: 'till' }).expect(200))
      .body as Signed;
  const auditOf = (action: string) =>
    t.sql<{ actor_type: string; actor: string | null; details: Record<string, unknown> }>(
      'SELECT actor_type, actor, details FROM audit_entries WHERE action = $1 ORDER BY id',
      [action],
    );

  it('imports SIGNING_KEY_FILE on first start: the deployment keeps its key_id', async () => {
    const fileKeyId = keyIdOf(readFileSync(process.env[ENV_SIGNING_KEY] as string, 'utf8'));
    const active = (await t.http().get('/api/v1/public-key').expect(200)).body as { key_id: string; algorithm: string };
    expect(active).toMatchObject({ algorithm: 'RSA-SHA256', key_id: fileKeyId });
    const list = await t.admin.get(KEYS).expect(200);
    expect(list.headers['x-total-count']).toBe('1');
    expect(list.body).toEqual([
      {
        key_id: fileKeyId,
        algorithm: 'RSA-SHA256',
        status: 'active',
        origin: 'imported',
        public_key_pem: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----/),
        created_at: expect.stringMatching(/Z$/),
        retired_at: null,
        revoked_at: null,
        endorsements: [],
      },
    ]);
  });

  it('stores the private key encrypted: the database holds no PEM and no DER of it', async () => {
    const [row] = await t.sql<{ private_key_encrypted: string }>('SELECT private_key_encrypted FROM signing_keys');
    expect(row.private_key_encrypted).toMatch(/^v1\./);
    expect(row.private_key_encrypted).not.toMatch(/PRIVATE KEY|MII/);
    const pem = readFileSync(process.env[ENV_SIGNING_KEY] as string, 'utf8');
    const base64Body = pem.split('\n')[1];
    expect(row.private_key_encrypted).not.toContain(base64Body.slice(0, 24));
  });

  it('the entity declares everything the migration created (schema diff empty for signing_keys)', async () => {
    // Only this entity: the licences table's generated column needs TypeORM's own metadata table to be compared.
    const ds = new DataSource({ type: 'postgres', url: t.config.databaseUrl, entities: [StoredSigningKey] });
    await ds.initialize();
    try {
      const queries = await ds.driver.createSchemaBuilder().log();
      expect(queries.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await ds.destroy();
    }
  });

  it('GET /public-keys and /.well-known/jwks.json publish the same key; the JWK is the PEM', async () => {
    const { keys } = await publishedKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ algorithm: 'RSA-SHA256', status: 'active', retired_at: null });
    const set = await jwks();
    expect(set.keys).toEqual([
      { kty: 'RSA', kid: keys[0].key_id, alg: 'RS256', use: 'sig', n: expect.any(String), e: 'AQAB', status: 'active', endorsements: [] },
    ]);
    expect(pemOfJwk(set.keys[0])).toBe(keys[0].public_key_pem);
  });

  it('every signed payload carries signed_at, the server time of the signature, inside the signed bytes', async () => {
    const license = await createLicense(t);
    const before = Date.now();
    const signed = await activate(license.license_key, fingerprint('signed-at'));
    const signedAt = Date.parse(signed.license.signed_at);
    expect(signed.license.signed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(signedAt).toBeGreaterThanOrEqual(before - 1000);
    expect(signedAt).toBeLessThanOrEqual(Date.now() + 1000);
    const pem = (await publishedKeys()).keys[0].public_key_pem;
    expect(verifySignedLicense(signed, pem)).toEqual({ valid: true });
    expect(verifySignedLicense({ ...signed, license: { ...signed.license, signed_at: '2099-01-01T00:00:00.000Z' } }, pem).valid).toBe(
      false,
    );
  });

  describe('rotation', () => {
    let oldKey: PublishedKey;
    let oldPayload: Signed;
    let licenseKey: string;
    let newKeyId: string;
    const fp = fingerprint('rotation-machine');

    beforeAll(async () => {
      licenseKey = (await createLicense(t)).license_key;
      oldPayload = await activate(licenseKey, fp);
      oldKey = (await publishedKeys()).keys[0];
    }, 60_000);

    it('POST /rotate answers 201 with the new active key; the previous one is retired', async () => {
      const res = await t.admin.post(`${KEYS}/rotate`).expect(201);
      newKeyId = res.body.key_id;
      expect(res.body).toMatchObject({
        algorithm: 'RSA-SHA256',
        status: 'active',
        origin: 'generated',
        retired_at: null,
        revoked_at: null,
      });
      expect(newKeyId).toMatch(/^[0-9a-f]{16}$/);
      expect(newKeyId).not.toBe(oldKey.key_id);
      expect(keyIdOf(res.body.public_key_pem)).toBe(newKeyId);
      const { keys } = await publishedKeys();
      expect(keys.map((k) => [k.key_id, k.status])).toEqual([
        [newKeyId, 'active'],
        [oldKey.key_id, 'retired'],
      ]);
      expect(keys[1].retired_at).toMatch(/Z$/);
      expect((await t.http().get('/api/v1/public-key').expect(200)).body.key_id).toBe(newKeyId);
      expect((await jwks()).keys.map((k) => k.kid)).toEqual([newKeyId, oldKey.key_id]);
    });

    it('exactly one key is active; the retired key no longer holds a private key', async () => {
      const rows = await t.sql<{ key_id: string; status: string; has_private: boolean }>(
        'SELECT key_id, status, private_key_encrypted IS NOT NULL AS has_private FROM signing_keys ORDER BY created_at',
      );
      expect(rows).toEqual([
        { key_id: oldKey.key_id, status: 'retired', has_private: false },
        { key_id: newKeyId, status: 'active', has_private: true },
      ]);
      await expect(
        t.sql(`UPDATE signing_keys SET status = 'active', retired_at = NULL WHERE key_id = $1`, [oldKey.key_id]),
      ).rejects.toThrow(/signing_keys_(one_active_idx|lifecycle_check)/);
    });

    it('the old payload still verifies with the retired key, not with the new one', async () => {
      const { keys } = await publishedKeys();
      const retired = keys.find((k) => k.key_id === oldKey.key_id) as PublishedKey;
      expect(oldPayload.license.key_id).toBe(oldKey.key_id);
      expect(verifySignedLicense(oldPayload, retired.public_key_pem)).toEqual({ valid: true });
      expect(verifySignedLicense(oldPayload, keys[0].public_key_pem).valid).toBe(false);
    });

    it('re-activating the same machine returns the payload signed by the new key, with the new key_id', async () => {
      const again = await activate(licenseKey, fp);
      expect(again.license.key_id).toBe(newKeyId);
      expect(again.license.activated_at).toBe(oldPayload.license.activated_at);
      const { keys } = await publishedKeys();
      expect(verifySignedLicense(again, keys[0].public_key_pem)).toEqual({ valid: true });
      expect(verifySignedLicense(again, oldKey.public_key_pem).valid).toBe(false);
    });

    it('writes signing_key.rotated with both key ids and the admin as actor', async () => {
      const entries = await auditOf('signing_key.rotated');
      expect(entries).toEqual([
        { actor_type: 'admin_api', actor: expect.any(String), details: { key_id: newKeyId, previous_key_id: oldKey.key_id } },
      ]);
      const api = await t.admin.get('/api/v1/admin/audit?action=signing_key.rotated').expect(200);
      expect(api.body).toHaveLength(1);
    });

    it('an instance on the same database picks the rotation up within a few seconds (version poll)', async () => {
      const second = await startSecondApp(t);
      try {
        expect(second.get(KeyringService).activeKey().keyId).toBe(newKeyId);
        const rotated = (await t.admin.post(`${KEYS}/rotate`).expect(201)).body.key_id as string;
        const started = Date.now();
        while (second.get(KeyringService).activeKey().keyId !== rotated) {
          if (Date.now() - started > 5000) throw new Error('the second instance did not see the rotation within 5 s');
          await new Promise((r) => setTimeout(r, 50));
        }
        newKeyId = rotated;
      } finally {
        await second.close();
      }
    });
  });

  describe('revocation', () => {
    it('the active key cannot be revoked: 409 CONFLICT, nothing changes', async () => {
      const active = (await t.http().get('/api/v1/public-key')).body.key_id as string;
      const res = await t.admin.post(`${KEYS}/${active}/revoke`).send({}).expect(409);
      expect(res.body.error.code).toBe('CONFLICT');
      expect((await t.http().get('/api/v1/public-key')).body.key_id).toBe(active);
    });

    it('unknown key: 404; a key_id that is not 16 hex digits: 400 naming key_id', async () => {
      expect((await t.admin.post(`${KEYS}/0123456789abcdef/revoke`).send({}).expect(404)).body.error.code).toBe('NOT_FOUND');
      const bad = await t.admin.post(`${KEYS}/not-a-key/revoke`).send({}).expect(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(bad.body)).toEqual(['key_id']);
    });

    it('revoking a retired key: 200, listed as revoked in /public-keys (clients drop it) and gone from the JWK Set, audited; again: 409 ALREADY_REVOKED', async () => {
      const retired = (await publishedKeys()).keys.filter((k) => k.status === 'retired');
      expect(retired.length).toBeGreaterThanOrEqual(1);
      const victim = retired[retired.length - 1].key_id;
      const res = await t.admin.post(`${KEYS}/${victim.toUpperCase()}/revoke`).send({ reason: 'found in a leaked backup' }).expect(200);
      expect(res.body).toMatchObject({ key_id: victim, status: 'revoked', revoked_at: expect.stringMatching(/Z$/) });
      expect((await publishedKeys()).keys.find((k) => k.key_id === victim)?.status).toBe('revoked');
      expect((await jwks()).keys.map((k) => k.kid)).not.toContain(victim);
      const listed = (await t.admin.get(KEYS).expect(200)).body as { key_id: string; status: string }[];
      expect(listed.find((k) => k.key_id === victim)?.status).toBe('revoked');
      expect(await auditOf('signing_key.revoked')).toEqual([
        { actor_type: 'admin_api', actor: expect.any(String), details: { key_id: victim, reason: 'found in a leaked backup' } },
      ]);
      const again = await t.admin.post(`${KEYS}/${victim}/revoke`).send({}).expect(409);
      expect(again.body.error.code).toBe('ALREADY_REVOKED');
    });

    it('the admin API rejects unknown fields and a bad reason; without the key: 401', async () => {
      const retired = (await publishedKeys()).keys.find((k) => k.status === 'retired') as PublishedKey;
      expect(fieldsOf((await t.admin.post(`${KEYS}/${retired.key_id}/revoke`).send({ why: 'x' }).expect(400)).body)).toContain('why');
      expect(fieldsOf((await t.admin.post(`${KEYS}/${retired.key_id}/revoke`).send({ reason: '' }).expect(400)).body)).toContain('reason');
      for (const [method, url] of [
        ['get', KEYS],
        ['post', `${KEYS}/rotate`],
        ['post', `${KEYS}/${retired.key_id}/revoke`],
      ] as const) {
        expect((await t.http()[method](url).send({}).expect(401)).body.error.code).toBe('UNAUTHORIZED');
      }
      expect((await publishedKeys()).keys.map((k) => k.key_id)).toContain(retired.key_id);
    });
  });

  it('Swagger documents the keyring routes and the optional nonce', async () => {
    const doc = (await t.http().get('/api/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties: Record<string, { pattern?: string }>; required?: string[] }> };
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/public-key',
        '/api/v1/public-keys',
        '/.well-known/jwks.json',
        '/api/v1/admin/signing-keys',
        '/api/v1/admin/signing-keys/rotate',
        '/api/v1/admin/signing-keys/{key_id}/revoke',
      ]),
    );
    expect(Object.keys(doc.paths['/api/v1/admin/signing-keys/{key_id}/revoke'].post.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '409']),
    );
    expect(doc.components.schemas.ValidateRequestDto.properties.nonce.pattern).toBe('^[A-Za-z0-9_-]{16,128}$');
    expect(doc.components.schemas.ValidateRequestDto.required).not.toContain('nonce');
    expect(doc.components.schemas.ValidateResponseDto.required).not.toContain('signature');
    expect(doc.components.schemas.LicensePayloadDto.required).toContain('signed_at');
  });
});

/** A second Nest app (another "instance") on the same database as `t`. */
async function startSecondApp(t: Pick<TestApp, 'config'>, overrides: Partial<AppConfig> = {}): Promise<INestApplication> {
  const config = { ...t.config, ...overrides };
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
  await configureApp(app, config);
  try {
    await app.init();
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  return app;
}

describe('KEYRING_SECRET', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()), 60_000);
  afterAll(() => t.close());

  it('a wrong secret fails start-up with a message naming KEYRING_SECRET, and never creates a new key', async () => {
    const before = await t.sql('SELECT key_id, status, private_key_encrypted FROM signing_keys ORDER BY key_id');
    const attempt = startSecondApp(t, { keyringSecret: 'another-keyring-secret-0123456789abcdef' });
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(attempt).rejects.toThrow(/KEYRING_SECRET does not decrypt the active signing key [0-9a-f]{16}/);
    expect(await t.sql('SELECT key_id, status, private_key_encrypted FROM signing_keys ORDER BY key_id')).toEqual(before);
  });
});

describe('first start of several instances at once', () => {
  it('creates exactly one active key (generated when SIGNING_KEY_FILE does not exist), which every instance uses', async () => {
    const adminUrl = process.env[ENV_ADMIN_URL] as string;
    const name = newDatabaseName('e2e');
    const databaseUrl = await createDatabaseFromTemplate(adminUrl, process.env[ENV_TEMPLATE] as string, name);
    const config = testConfig(databaseUrl, { signingKeyFile: '/nonexistent-dir/signing-key.pem', dbPoolSize: 3 });
    const apps: INestApplication[] = [];
    try {
      const started = await Promise.allSettled([1, 2, 3].map(() => startSecondApp({ config })));
      for (const s of started) if (s.status === 'fulfilled') apps.push(s.value);
      expect(started.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const ids = apps.map((a) => a.get(KeyringService).activeKey().keyId);
      expect(new Set(ids).size).toBe(1);
      const rows = await apps[0].get(KeyringService).listKeys();
      expect(rows.map((r) => [r.keyId, r.status, r.origin])).toEqual([[ids[0], 'active', 'generated']]);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
      await dropDatabase(adminUrl, name);
    }
  });
});
