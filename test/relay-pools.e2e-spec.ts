import { createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { EventFanoutService } from '../src/events/event-fanout.service';
import type { VerifyingKey } from '../src/signing/envelope';
import { keyIdOf } from '../src/signing/license-signature';
import { armorJson, dearmorJson, Pool, POOL_FILE_LABEL, POOL_REQUEST_LABEL, verifyPoolFile } from '../src/relay/pool-file';
import { createLicense, fannedOut, fingerprint, setLicenseExpiry } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

const DAY = 86_400_000;
const POOLS = '/api/v1/admin/relay-pools';

interface Relay {
  key: KeyObject;
  pem: string;
  keyId: string;
  fingerprint: string;
}

function newRelay(seed: string): Relay {
  const { publicKey } = generateKeyPairSync('ed25519');
  return {
    key: publicKey,
    pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyId: keyIdOf(publicKey),
    fingerprint: fingerprint(seed),
  };
}

/** What `relay init` prints (docs/relay.md, Setting up a relay). */
const poolRequest = (licenseKey: string, relay: Relay, seats: number, extra: Record<string, unknown> = {}) =>
  armorJson(POOL_REQUEST_LABEL, {
    license_key: licenseKey,
    relay_fingerprint: relay.fingerprint,
    relay_public_key: relay.pem,
    seats,
    ...extra,
  });

describe('relay pools on the vendor side (docs/relay.md, Issuing a pool)', () => {
  let t: TestApp;
  let vendorKeys: Map<string, VerifyingKey>;

  beforeAll(async () => {
    t = await createTestApp();
    // A test reads the issue's event in the outbox before it fans it out (fannedOut); the background pass would take it
    // first, as a busy machine showed once. Stopped, the events wait for the test's own pass.
    await t.app.get(EventFanoutService).stop();
    const published = (await t.http().get('/api/v1/public-keys').expect(200)).body as {
      keys: { key_id: string; public_key_pem: string }[];
    };
    vendorKeys = new Map(published.keys.map((k) => [k.key_id, { key: createPublicKey(k.public_key_pem) }]));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  const licence = (seats: number, overrides = {}) => createLicense(t, { limits: { max_installations: seats }, ...overrides });
  const activate = (key: string, seed: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: key, machine_fingerprint: fingerprint(seed), hostname: seed });
  const issue = (body: Record<string, unknown>) => t.admin.post(POOLS).send(body);
  const poolsOf = async (id: number) =>
    (await t.admin.get(`/api/v1/admin/licenses/${id}/relay-pools`).expect(200)).body as Record<string, unknown>[];

  it('answers 201 {pool_id, pool_file, expires_at}: a pool file the relay verifies, issued to the relay machine and key', async () => {
    const lic = await licence(5);
    const relay = newRelay('relay-roundtrip');
    const before = Date.now();
    const res = await issue({ request: poolRequest(lic.license_key.toLowerCase(), relay, 3) }).expect(201);
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'pool_file', 'pool_id']);
    const text = res.body.pool_file as string;
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('-----BEGIN RELAY POOL-----');
    expect(lines[lines.length - 1]).toBe('-----END RELAY POOL-----');
    lines.slice(1, -2).forEach((line) => expect(line).toHaveLength(64));
    const verdict = verifyPoolFile(text, (id) => vendorKeys.get(id));
    if (!verdict.ok) throw new Error(verdict.message);
    const { pool, envelope } = verdict.value;
    expect(Object.keys(pool).sort()).toEqual([
      'expires_at',
      'issued_at',
      'license',
      'pool_id',
      'relay_key_id',
      'relay_public_key',
      'seats',
    ]);
    expect(pool).toMatchObject({
      pool_id: res.body.pool_id,
      seats: 3,
      relay_public_key: relay.pem,
      relay_key_id: relay.keyId,
      expires_at: res.body.expires_at,
    });
    expect(pool.license).toMatchObject({ license_key: lic.license_key, machine_fingerprint: relay.fingerprint, key_id: envelope.key_id });
    expect(pool.license).toHaveProperty('policy');
    const issued = Date.parse(pool.issued_at);
    expect(issued).toBeGreaterThanOrEqual(before - 2000);
    expect(Date.parse(pool.expires_at) - issued).toBe(30 * DAY);
    const [audit] = await t.sql<{ actor_type: string; details: Record<string, unknown> }>(
      `SELECT actor_type, details FROM audit_entries WHERE license_id = $1 AND action = 'license.relay_pool_issued'`,
      [lic.id],
    );
    expect(audit).toMatchObject({ actor_type: 'admin_api', details: { pool_id: pool.pool_id, seats: 3, relay_key_id: relay.keyId } });
    const [outbox] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM event_outbox WHERE license_id = $1 AND type = 'license.relay_pool_issued'`,
      [lic.id],
    );
    expect(outbox.n).toBe(1);
    await fannedOut(t);
  });

  it('holds the seats while valid: /activate sees them taken, and a pool asking for more than is free is refused', async () => {
    const lic = await licence(3);
    await activate(lic.license_key, 'held-a').expect(200);
    await issue({ request: poolRequest(lic.license_key, newRelay('held-relay'), 2) }).expect(201);
    const refused = await activate(lic.license_key, 'held-b').expect(400);
    expect(refused.body.error.code).toBe('ALREADY_ACTIVATED');
    const tooMany = await issue({ request: poolRequest(lic.license_key, newRelay('held-relay-2'), 1) }).expect(400);
    expect(tooMany.body.error).toMatchObject({
      code: 'ACTIVATION_LIMIT_REACHED',
      details: { requested: 1, available: 0, max_installations: 3 },
    });
  });

  it('body seats override the request; ttl_days sets the expiry, never past the licence grace end', async () => {
    const lic = await licence(4);
    const res = await issue({ request: poolRequest(lic.license_key, newRelay('ttl-relay'), 4), seats: 1, ttl_days: 7 }).expect(201);
    const [pool] = await poolsOf(lic.id);
    expect(pool).toMatchObject({ seats: 1, status: 'active' });
    expect(Date.parse(res.body.expires_at) - Date.parse(pool.issued_at as string)).toBe(7 * DAY);
    const ending = await licence(2);
    const expiry = new Date(Date.now() + 2 * DAY);
    await setLicenseExpiry(t, ending.id, expiry, 1);
    const capped = await issue({ request: poolRequest(ending.license_key, newRelay('cap-relay'), 1), ttl_days: 365 }).expect(201);
    expect(Date.parse(capped.body.expires_at)).toBe(expiry.getTime() + DAY);
  });

  it('a new request from the same relay key replaces its pool; the seats are not counted twice', async () => {
    const lic = await licence(3);
    const relay = newRelay('replace-relay');
    const first = await issue({ request: poolRequest(lic.license_key, relay, 2) }).expect(201);
    const second = await issue({ request: poolRequest(lic.license_key, relay, 3) }).expect(201);
    expect(second.body.pool_id).not.toBe(first.body.pool_id);
    const pools = await poolsOf(lic.id);
    expect(pools.map((p) => [p.pool_id, p.status])).toEqual([
      [second.body.pool_id, 'active'],
      [first.body.pool_id, 'replaced'],
    ]);
    expect((await activate(lic.license_key, 'replace-a').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
    // Another relay key is another pool: no seat is left for it.
    expect((await issue({ request: poolRequest(lic.license_key, newRelay('other-relay'), 1) }).expect(400)).body.error.code).toBe(
      'ACTIVATION_LIMIT_REACHED',
    );
  });

  it('ending a pool returns its seats at once and is audited; ending it again is 409, an unknown pool 404', async () => {
    const lic = await licence(1);
    const { body } = await issue({ request: poolRequest(lic.license_key, newRelay('end-relay'), 1) }).expect(201);
    await activate(lic.license_key, 'end-a').expect(400);
    const ended = await t.admin.post(`/api/v1/admin/licenses/${lic.id}/relay-pools/${body.pool_id}/end`).expect(200);
    expect(ended.body).toMatchObject({ pool_id: body.pool_id, status: 'ended' });
    expect(ended.body.ended_at).toEqual(expect.any(String));
    await activate(lic.license_key, 'end-a').expect(200);
    const again = await t.admin.post(`/api/v1/admin/licenses/${lic.id}/relay-pools/${body.pool_id}/end`).expect(409);
    expect(again.body.error.code).toBe('CONFLICT');
    await t.admin.post(`/api/v1/admin/licenses/${lic.id}/relay-pools/00000000-0000-4000-8000-000000000000/end`).expect(404);
    await t.admin.post(`/api/v1/admin/licenses/${lic.id}/relay-pools/not-a-uuid/end`).expect(404);
    const other = await licence(1);
    await t.admin.post(`/api/v1/admin/licenses/${other.id}/relay-pools/${body.pool_id}/end`).expect(404);
    const [audit] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_entries WHERE license_id = $1 AND action = 'license.relay_pool_ended'`,
      [lic.id],
    );
    expect(audit.n).toBe(1);
  });

  it('an expired pool holds nothing', async () => {
    const lic = await licence(1);
    const { body } = await issue({ request: poolRequest(lic.license_key, newRelay('expired-relay'), 1) }).expect(201);
    await t.sql(`UPDATE relay_pools SET expires_at = now() - interval '1 second' WHERE id = $1`, [body.pool_id]);
    await activate(lic.license_key, 'after-expiry').expect(200);
    expect((await poolsOf(lic.id))[0].status).toBe('expired');
  });

  it.each([
    ['revoked', 'KEY_REVOKED'],
    ['suspended', 'KEY_SUSPENDED'],
    ['expired', 'KEY_EXPIRED'],
  ])('a %s licence: 400 %s, no pool', async (state, code) => {
    const lic = await licence(2);
    if (state === 'revoked') await t.admin.post(`/api/v1/admin/licenses/${lic.id}/revoke`).send({ reason: 'test' }).expect(200);
    if (state === 'suspended') await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ active: false }).expect(200);
    if (state === 'expired') await setLicenseExpiry(t, lic.id, new Date(Date.now() - 30 * DAY), 0);
    const res = await issue({ request: poolRequest(lic.license_key, newRelay(`state-${state}`), 1) }).expect(400);
    expect(res.body.error.code).toBe(code);
    expect(await poolsOf(lic.id)).toEqual([]);
  });

  it('an unknown key: 400 INVALID_KEY', async () => {
    const res = await issue({ request: poolRequest('POS-AAAAA-BBBBB-CCCCC-DDDDD', newRelay('unknown'), 1) }).expect(400);
    expect(res.body.error.code).toBe('INVALID_KEY');
  });

  describe('malformed requests: 400 VALIDATION_ERROR, never 500', () => {
    const relay = newRelay('malformed');
    const armored = (text: string) => `-----BEGIN RELAY POOL REQUEST-----\n${text}\n-----END RELAY POOL REQUEST-----\n`;
    it.each([
      ['no request', {}, 'request'],
      ['a number', { request: 5 }, 'request'],
      ['an unknown field', { request: 'x', extra: true }, 'extra'],
      ['no markers', { request: 'eyJzZWF0cyI6MX0=' }, 'request'],
      ['an activation request', { request: '-----BEGIN ACTIVATION REQUEST-----\neyJ9\n-----END ACTIVATION REQUEST-----' }, 'request'],
      ['not base64', { request: armored('!!!!') }, 'request'],
      ['not JSON', { request: armored(Buffer.from('{not json').toString('base64')) }, 'request'],
      ['a JSON array', { request: armored(Buffer.from('[1]').toString('base64')) }, 'request'],
      ['seats 0 in the body', { request: 'x', seats: 0 }, 'seats'],
      ['seats "2" in the body', { request: 'x', seats: '2' }, 'seats'],
      ['ttl_days 0', { request: 'x', ttl_days: 0 }, 'ttl_days'],
      ['ttl_days 366', { request: 'x', ttl_days: 366 }, 'ttl_days'],
      ['a bad fingerprint', { request: poolRequest('POS-A', { ...relay, fingerprint: 'sha256:xyz' }, 1) }, 'request.relay_fingerprint'],
      ['an RSA relay key', { request: poolRequest('POS-A', { ...relay, pem: rsaPem() }, 1) }, 'request.relay_public_key'],
      ['a private key for a public key', { request: poolRequest('POS-A', { ...relay, pem: 'garbage' }, 1) }, 'request.relay_public_key'],
      ['seats 0 in the request', { request: poolRequest('POS-A', relay, 0) }, 'request.seats'],
      ['seats 1.5 in the request', { request: poolRequest('POS-A', relay, 1.5) }, 'request.seats'],
      ['no license_key', { request: poolRequest('', relay, 1) }, 'request.license_key'],
    ])('%s', async (_label, body, field) => {
      const res = await issue(body).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect((res.body.error.details.fields as { field: string }[]).map((f) => f.field)).toContain(field);
    });
  });

  describe('credentials', () => {
    const tokenFor = async (scopes: string[], products?: string[]) =>
      (
        await t.admin
          .post('/api/v1/admin/tokens')
          .send({ name: `relay-token-${scopes.length}-${products?.length ?? 0}`, scopes, ...(products ? { products } : {}) })
          .expect(201)
      ).body.token as string;

    it("a token limited to other products: another product's licence is as unknown as a wrong key, and nothing is held", async () => {
      const lic = await licence(2, { product_code: 'POS_RETAIL' });
      const token = await tokenFor(['licenses:write', 'licenses:read'], ['ERP_SUITE']);
      const res = await t
        .http()
        .post(POOLS)
        .set('X-API-Key', token)
        .send({ request: poolRequest(lic.license_key, newRelay('scoped'), 1) })
        .expect(400);
      expect(res.body.error.code).toBe('INVALID_KEY');
      expect(await poolsOf(lic.id)).toEqual([]);
      await t.http().get(`/api/v1/admin/licenses/${lic.id}/relay-pools`).set('X-API-Key', token).expect(404);
      const own = await licence(2, { product_code: 'ERP_SUITE' });
      const ok = await t
        .http()
        .post(POOLS)
        .set('X-API-Key', token)
        .send({ request: poolRequest(own.license_key, newRelay('scoped-own'), 1) })
        .expect(201);
      await t.http().post(`/api/v1/admin/licenses/${lic.id}/relay-pools/${ok.body.pool_id}/end`).set('X-API-Key', token).expect(404);
    });

    it('issuing needs licenses:write; no key is 401', async () => {
      const lic = await licence(2);
      const reader = await tokenFor(['licenses:read']);
      const request = poolRequest(lic.license_key, newRelay('reader'), 1);
      expect((await t.http().post(POOLS).set('X-API-Key', reader).send({ request }).expect(403)).body.error.code).toBe('FORBIDDEN');
      await t.http().get(`/api/v1/admin/licenses/${lic.id}/relay-pools`).set('X-API-Key', reader).expect(200);
      await t.http().post(POOLS).send({ request }).expect(401);
    });
  });

  it('a pool and activations racing for the last seats never take more than max_installations', async () => {
    const lic = await licence(2);
    const results = await Promise.all([
      issue({ request: poolRequest(lic.license_key, newRelay('race-relay'), 1) }),
      ...[1, 2, 3].map((n) => activate(lic.license_key, `race-${n}`)),
    ]);
    const [pool, ...activations] = results;
    const bound = activations.filter((r) => r.status === 200).length;
    expect(bound + (pool.status === 201 ? 1 : 0)).toBe(2);
    const [{ n }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM activations WHERE license_id = $1 AND released_at IS NULL', [
      lic.id,
    ]);
    expect(n).toBe(bound);
  });

  it('the pool beside the envelope is exactly its decoded payload', async () => {
    const lic = await licence(2);
    const { body } = await issue({ request: poolRequest(lic.license_key, newRelay('decode'), 1) }).expect(201);
    const decoded = dearmorJson(POOL_FILE_LABEL, body.pool_file);
    if (!decoded.ok) throw new Error(decoded.message);
    const payload = JSON.parse(Buffer.from((decoded.value.envelope as { payload: string }).payload, 'base64url').toString('utf8')) as Pool;
    expect(payload).toEqual(decoded.value.pool);
  });
});

function rsaPem(): string {
  return generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
}
