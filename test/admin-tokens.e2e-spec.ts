import { ADMIN_SCOPES, type AdminScope, isGlobalScope } from '../src/common/auth/scopes';
import { asBearer, createLicense, insertSeat } from './support/factories';
import { fieldsOf } from './support/api-errors';
import { createTestApp, TestApp } from './support/test-app';

const TOKENS = '/api/v1/admin/tokens';

/**
 * Every admin operation and the one scope it needs (docs/admin-api.md, Scopes). The test below also checks that the Swagger
 * document lists exactly these admin operations, so a new admin route fails here until it is given its scope.
 */
const ROUTE_SCOPES: Record<string, AdminScope> = {
  'GET /api/v1/admin/products': 'products:read',
  'GET /api/v1/admin/products/{id}': 'products:read',
  'POST /api/v1/admin/products': 'products:write',
  'PUT /api/v1/admin/products/{id}': 'products:write',
  'GET /api/v1/admin/licenses': 'licenses:read',
  'GET /api/v1/admin/licenses/export': 'licenses:read',
  'GET /api/v1/admin/licenses/{id}': 'licenses:read',
  'GET /api/v1/admin/licenses/{id}/activations': 'licenses:read',
  'POST /api/v1/admin/licenses': 'licenses:write',
  'PUT /api/v1/admin/licenses/{id}': 'licenses:write',
  'POST /api/v1/admin/licenses/{id}/revoke': 'licenses:write',
  'POST /api/v1/admin/licenses/{id}/release': 'licenses:write',
  'GET /api/v1/admin/licenses/{id}/usage': 'licenses:read',
  'POST /api/v1/admin/licenses/{id}/usage/reset': 'licenses:write',
  'POST /api/v1/admin/relay-pools': 'licenses:write',
  'GET /api/v1/admin/licenses/{id}/relay-pools': 'licenses:read',
  'POST /api/v1/admin/licenses/{id}/relay-pools/{pool_id}/end': 'licenses:write',
  'GET /api/v1/admin/audit': 'audit:read',
  'GET /api/v1/admin/audit/export': 'audit:read',
  'GET /api/v1/admin/stats': 'stats:read',
  'GET /api/v1/admin/stats/daily': 'stats:read',
  'GET /api/v1/admin/staff': 'staff:read',
  'GET /api/v1/admin/tokens': 'tokens:manage',
  'POST /api/v1/admin/tokens': 'tokens:manage',
  'DELETE /api/v1/admin/tokens/{id}': 'tokens:manage',
  'POST /api/v1/admin/offline-activations': 'licenses:write',
  'GET /api/v1/admin/signing-keys': 'signing-keys:manage',
  'POST /api/v1/admin/webhooks': 'webhooks:manage',
  'GET /api/v1/admin/webhooks': 'webhooks:manage',
  'GET /api/v1/admin/webhooks/{id}': 'webhooks:manage',
  'PUT /api/v1/admin/webhooks/{id}': 'webhooks:manage',
  'DELETE /api/v1/admin/webhooks/{id}': 'webhooks:manage',
  'POST /api/v1/admin/webhooks/{id}/rotate-secret': 'webhooks:manage',
  'GET /api/v1/admin/webhooks/{id}/deliveries': 'webhooks:manage',
  'POST /api/v1/admin/webhook-deliveries/{id}/retry': 'webhooks:manage',
  'GET /api/v1/admin/mail': 'licenses:read',
  'POST /api/v1/admin/mail/{id}/retry': 'licenses:write',
  'POST /api/v1/admin/signing-keys/rotate': 'signing-keys:manage',
  'POST /api/v1/admin/signing-keys/{key_id}/revoke': 'signing-keys:manage',
  'POST /api/v1/admin/signing-keys/{key_id}/endorsements': 'signing-keys:manage',
  'POST /api/v1/admin/store-plans': 'stores:manage',
  'GET /api/v1/admin/store-plans': 'stores:manage',
  'GET /api/v1/admin/store-plans/{id}': 'stores:manage',
  'PUT /api/v1/admin/store-plans/{id}': 'stores:manage',
  'DELETE /api/v1/admin/store-plans/{id}': 'stores:manage',
  'GET /api/v1/admin/store-events': 'stores:manage',
  'POST /api/v1/admin/store-events/{id}/replay': 'stores:manage',
  'POST /api/v1/admin/products/{code}/releases': 'releases:manage',
  'GET /api/v1/admin/products/{code}/releases': 'releases:manage',
  'GET /api/v1/admin/releases/{id}': 'releases:manage',
  'GET /api/v1/admin/releases/{id}/downloads': 'releases:manage',
  'PUT /api/v1/admin/releases/{id}/artifacts/{filename}': 'releases:manage',
  'POST /api/v1/admin/releases/{id}/publish': 'releases:manage',
  'POST /api/v1/admin/releases/{id}/yank': 'releases:manage',
  'DELETE /api/v1/admin/releases/{id}': 'releases:manage',
};

interface CreatedToken {
  id: number;
  name: string;
  scopes: string[];
  products: string[] | null;
  expires_at: string | null;
  created_at: string;
  token: string;
}

let sequence = 0;

describe('admin tokens and scopes (docs/admin-api.md, Credentials)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);
  afterAll(() => t.close());

  const issue = async (body: Record<string, unknown>): Promise<CreatedToken> => {
    const res = await t.admin.post(TOKENS).send({ name: `token-${++sequence}`, ...body });
    if (res.status !== 201) throw new Error(`issue: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as CreatedToken;
  };
  const as = (token: string) => asBearer(t, token);

  it('the admin_tokens entity declares everything its migration creates (empty schema diff)', async () => {
    // TypeORM reads generated-column metadata (licenses.search_text) from this table; in this test database only.
    await t.sql(
      `CREATE TABLE IF NOT EXISTS typeorm_metadata (type varchar NOT NULL, database varchar, schema varchar, "table" varchar, name varchar, value text)`,
    );
    const { upQueries } = await t.dataSource.driver.createSchemaBuilder().log();
    expect(upQueries.map((q) => q.query).filter((q) => q.includes('admin_tokens'))).toEqual([]);
  });

  describe('issuing, listing and revoking', () => {
    it('201 with the lst_ token shown once; GET lists it without the token, with status and last_used_at', async () => {
      const created = await issue({
        name: 'webshop',
        scopes: ['licenses:write'],
        products: ['POS_RETAIL'],
        expires_at: '2099-01-01T00:00:00Z',
      });
      expect(created).toEqual({
        id: expect.any(Number),
        name: 'webshop',
        scopes: ['licenses:write'],
        products: ['POS_RETAIL'],
        expires_at: '2099-01-01T00:00:00.000Z',
        created_at: expect.stringMatching(/Z$/),
        token: expect.stringMatching(/^lst_[A-Za-z0-9_-]{43}$/),
      });
      const [row] = await t.sql<{ token_hash: string }>('SELECT token_hash FROM admin_tokens WHERE id = $1', [created.id]);
      expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.token_hash).not.toContain(created.token.slice(4));
      const list = await t.admin.get(TOKENS).expect(200);
      expect(JSON.stringify(list.body)).not.toContain(created.token);
      expect(Number(list.headers['x-total-count'])).toBe((list.body as unknown[]).length);
      expect((list.body as { id: number }[]).find((x) => x.id === created.id)).toEqual({
        id: created.id,
        name: 'webshop',
        scopes: ['licenses:write'],
        products: ['POS_RETAIL'],
        expires_at: '2099-01-01T00:00:00.000Z',
        created_at: created.created_at,
        last_used_at: null,
        revoked_at: null,
        status: 'active',
      });
    });

    it.each([
      ['an unknown scope', { scopes: ['licenses:delete'] }, 'scopes'],
      ['no scope', { scopes: [] }, 'scopes'],
      ['a repeated scope', { scopes: ['stats:read', 'stats:read'] }, 'scopes'],
      ['an unknown product', { scopes: ['stats:read'], products: ['NO_SUCH'] }, 'products'],
      ['an empty product list', { scopes: ['stats:read'], products: [] }, 'products'],
      ['an expiry in the past', { scopes: ['stats:read'], expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      ['a malformed expiry', { scopes: ['stats:read'], expires_at: 'tomorrow' }, 'expires_at'],
      ['a bad name', { name: '', scopes: ['stats:read'] }, 'name'],
      ['an unknown field', { scopes: ['stats:read'], admin: true }, 'admin'],
    ])('400 VALIDATION_ERROR for %s', async (_label, body, field) => {
      const res = await t.admin
        .post(TOKENS)
        .send({ name: `bad-${++sequence}`, ...body })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(res.body)).toContain(field);
    });

    it('409 CONFLICT for a name in use', async () => {
      await issue({ name: 'twice', scopes: ['stats:read'] });
      const res = await t.admin
        .post(TOKENS)
        .send({ name: 'twice', scopes: ['stats:read'] })
        .expect(409);
      expect(res.body.error.code).toBe('CONFLICT');
    });

    it('a token grants no more than it holds: 403 for other scopes or wider products', async () => {
      const manager = await issue({ scopes: ['tokens:manage', 'licenses:read'], products: ['POS_RETAIL'] });
      const wider = await as(manager.token)
        .post(TOKENS)
        .send({ name: 'wider', scopes: ['licenses:write'], products: ['POS_RETAIL'] });
      expect([wider.status, wider.body.error.code]).toEqual([403, 'FORBIDDEN']);
      const allProducts = await as(manager.token)
        .post(TOKENS)
        .send({ name: 'all-products', scopes: ['licenses:read'] });
      expect([allProducts.status, allProducts.body.error.code]).toEqual([403, 'FORBIDDEN']);
      const other = await as(manager.token)
        .post(TOKENS)
        .send({ name: 'other', scopes: ['licenses:read'], products: ['ERP_SUITE'] });
      expect(other.status).toBe(403);
      await as(manager.token)
        .post(TOKENS)
        .send({ name: 'narrower', scopes: ['licenses:read'], products: ['POS_RETAIL'] })
        .expect(201);
    });

    it('revocation is effective on the next request; the audit log names the token as actor', async () => {
      const manager = await issue({ name: 'support-desk', scopes: ['tokens:manage', 'stats:read'] });
      const victim = await as(manager.token)
        .post(TOKENS)
        .send({ name: 'to-revoke', scopes: ['stats:read'] })
        .expect(201);
      const token = (victim.body as CreatedToken).token;
      await t.http().get('/api/v1/admin/stats').set('X-API-Key', token).expect(200);
      const revoked = await as(manager.token)
        .delete(`${TOKENS}/${(victim.body as CreatedToken).id}`)
        .expect(200);
      expect(revoked.body).toMatchObject({ status: 'revoked', revoked_at: expect.stringMatching(/Z$/) });
      const after = await t.http().get('/api/v1/admin/stats').set('X-API-Key', token).expect(401);
      expect(after.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'This token has been revoked' });
      await as(manager.token)
        .delete(`${TOKENS}/${(victim.body as CreatedToken).id}`)
        .expect(409)
        .expect((res) => expect(res.body.error.code).toBe('ALREADY_REVOKED'));
      await as(manager.token).delete(`${TOKENS}/999999`).expect(404);
      const entries = await t.sql<{ action: string; actor: string; actor_type: string; details: Record<string, unknown> }>(
        `SELECT action, actor, actor_type, details FROM audit_entries WHERE action LIKE 'token.%' AND details->>'name' = 'to-revoke' ORDER BY id`,
      );
      expect(entries).toEqual([
        {
          action: 'token.created',
          actor: 'token:support-desk',
          actor_type: 'admin_api',
          details: expect.objectContaining({ name: 'to-revoke', scopes: ['stats:read'], products: null }),
        },
        {
          action: 'token.revoked',
          actor: 'token:support-desk',
          actor_type: 'admin_api',
          details: expect.objectContaining({ name: 'to-revoke' }),
        },
      ]);
    });

    it('a licence created with a token is audited with actor token:<name>', async () => {
      const shop = await issue({ name: 'shop', scopes: ['licenses:write'] });
      const res = await as(shop.token)
        .post('/api/v1/admin/licenses')
        .send({ product_code: 'POS_RETAIL', license_type: 'YEARLY', customer_name: 'Shop Buyer' })
        .expect(201);
      const [entry] = await t.sql<{ actor: string; actor_type: string }>(
        `SELECT actor, actor_type FROM audit_entries WHERE license_id = $1 AND action = 'license.created'`,
        [res.body.id],
      );
      expect(entry).toEqual({ actor: 'token:shop', actor_type: 'admin_api' });
    });
  });

  describe('authentication', () => {
    it('X-API-Key and Authorization: Bearer work for tokens and API keys alike', async () => {
      const reader = await issue({ scopes: ['stats:read'] });
      await t.http().get('/api/v1/admin/stats').set('X-API-Key', reader.token).expect(200);
      await t.http().get('/api/v1/admin/stats').set('Authorization', `Bearer ${reader.token}`).expect(200);
      await t.http().get('/api/v1/admin/stats').set('Authorization', `Bearer ${t.config.apiKeys[0]}`).expect(200);
      await t.http().get('/api/v1/admin/stats').set('Authorization', `bearer ${t.config.apiKeys[0]}`).expect(200);
    });

    it.each([
      ['no credential', {}, 'Missing X-API-Key or Authorization: Bearer header'],
      ['an unknown token', { 'X-API-Key': 'lst_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, 'Invalid API key'],
      ['a wrong API key', { Authorization: 'Bearer nope' }, 'Invalid API key'],
      ['another scheme', { Authorization: 'Basic YWRtaW46YWRtaW4=' }, 'Invalid API key'],
    ])('401 UNAUTHORIZED for %s', async (_label, headers, message) => {
      const res = await t.http().get('/api/v1/admin/stats').set(headers).expect(401);
      expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message } });
    });

    it('an API_KEY key that happens to start with lst_ is still a key', async () => {
      const other = await createTestApp({ apiKeys: ['lst_operator-key-0123456789'] });
      try {
        await other.http().get('/api/v1/admin/stats').set('X-API-Key', 'lst_operator-key-0123456789').expect(200);
        await other.http().get('/api/v1/admin/stats').set('X-API-Key', 'lst_operator-key-012345678').expect(401);
      } finally {
        await other.close();
      }
    });

    it('401 UNAUTHORIZED once a token has expired', async () => {
      const shortLived = await issue({ scopes: ['stats:read'], expires_at: new Date(Date.now() + 60_000).toISOString() });
      await as(shortLived.token).get('/api/v1/admin/stats').expect(200);
      await t.sql(`UPDATE admin_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [shortLived.id]);
      const res = await as(shortLived.token).get('/api/v1/admin/stats').expect(401);
      expect(res.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'This token has expired' });
      const listed = (await t.admin.get(TOKENS).expect(200)).body as { id: number; status: string }[];
      expect(listed.find((x) => x.id === shortLived.id)?.status).toBe('expired');
    });

    it('last_used_at is written on use, then at most once a minute', async () => {
      const user = await issue({ scopes: ['stats:read'] });
      const lastUsed = async () =>
        (await t.sql<{ last_used_at: Date | null }>('SELECT last_used_at FROM admin_tokens WHERE id = $1', [user.id]))[0].last_used_at;
      expect(await lastUsed()).toBeNull();
      await as(user.token).get('/api/v1/admin/stats').expect(200);
      const first = await lastUsed();
      expect(first).toBeInstanceOf(Date);
      await t.sql(`UPDATE admin_tokens SET last_used_at = now() - interval '30 seconds' WHERE id = $1`, [user.id]);
      const thirtySecondsAgo = await lastUsed();
      await as(user.token).get('/api/v1/admin/stats').expect(200);
      expect(await lastUsed()).toEqual(thirtySecondsAgo);
      await t.sql(`UPDATE admin_tokens SET last_used_at = now() - interval '61 seconds' WHERE id = $1`, [user.id]);
      await as(user.token).get('/api/v1/admin/stats').expect(200);
      expect((await lastUsed())!.getTime()).toBeGreaterThan(Date.now() - 10_000);
    });
  });

  describe('every scope allows exactly its routes', () => {
    const tokens: Partial<Record<AdminScope, string>> = {};
    beforeAll(async () => {
      for (const scope of ADMIN_SCOPES) tokens[scope] = (await issue({ name: `only-${scope.replace(':', '-')}`, scopes: [scope] })).token;
    }, 60_000);

    it('the Swagger document lists exactly the admin operations of the table, each with its scope, both security schemes, 401 and 403', async () => {
      const doc = (await t.http().get('/api/docs-json').expect(200)).body as {
        paths: Record<string, Record<string, { 'x-required-scope'?: string; security?: unknown[]; responses: Record<string, unknown> }>>;
        components: { securitySchemes: Record<string, unknown> };
      };
      const declared: Record<string, string | undefined> = {};
      for (const [path, ops] of Object.entries(doc.paths)) {
        if (!path.startsWith('/api/v1/admin/')) continue;
        for (const [method, op] of Object.entries(ops)) {
          declared[`${method.toUpperCase()} ${path}`] = op['x-required-scope'];
          expect(op.security).toEqual(expect.arrayContaining([{ 'api-key': [] }, { bearer: [] }]));
          expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403']));
        }
      }
      expect(declared).toEqual(ROUTE_SCOPES);
      expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['api-key', 'bearer', 'metrics-token']);
    });

    const cases = Object.entries(ROUTE_SCOPES).flatMap(([route, required]) =>
      ADMIN_SCOPES.map((scope) => [route, scope, required] as const),
    );
    it.each(cases)('%s with only %s (needs %s)', async (route, scope, required) => {
      const [method, path] = route.split(' ');
      const url = path.replace('{id}', '999999').replace('{pool_id}', '999999');
      const req = t.http()[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](url).set('X-API-Key', tokens[scope]!);
      const res = method === 'GET' || method === 'DELETE' ? await req : await req.send({});
      if (scope === required) {
        expect([401, 403]).not.toContain(res.status);
      } else {
        expect(res.status).toBe(403);
        expect(res.body.error).toEqual({
          code: 'FORBIDDEN',
          message: `This route needs the scope ${required}`,
          details: { required_scope: required },
        });
      }
    });

    it('API_KEY keys hold every scope', async () => {
      for (const route of Object.keys(ROUTE_SCOPES)) {
        const [method, path] = route.split(' ');
        const verb = method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
        const req = t.http()[verb](path.replace('{id}', '999999').replace('{pool_id}', '999999')).set('X-API-Key', t.config.apiKeys[0]);
        const res = method === 'GET' || method === 'DELETE' ? await req : await req.send({});
        expect([route, res.status]).not.toEqual([route, 403]);
        expect(res.status).not.toBe(401);
      }
    });
  });

  describe('product restriction (in every list, detail, audit, stats and export)', () => {
    let reseller: string;
    let own: number;
    let foreign: number;
    beforeAll(async () => {
      // Every scope a limited token may hold: the global ones need every product.
      reseller = (await issue({ name: 'reseller', scopes: ADMIN_SCOPES.filter((s) => !isGlobalScope(s)), products: ['POS_RETAIL'] })).token;
      own = (await createLicense(t, { product_code: 'POS_RETAIL', customer_name: 'Reseller Own' })).id;
      foreign = (await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Reseller Foreign' })).id;
      await insertSeat(t, own);
      await insertSeat(t, foreign);
    }, 60_000);

    it("licence list and export show only the token's products; a product filter outside them finds nothing", async () => {
      const list = await as(reseller).get('/api/v1/admin/licenses?limit=1000').expect(200);
      const codes = new Set((list.body as { product_code: string }[]).map((l) => l.product_code));
      expect([...codes]).toEqual(['POS_RETAIL']);
      expect((list.body as { id: number }[]).map((l) => l.id)).toContain(own);
      const [{ n }] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM licenses l JOIN products p ON p.id = l.product_id WHERE p.code = 'POS_RETAIL'`,
      );
      expect(Number(list.headers['x-total-count'])).toBe(n);
      const other = await as(reseller).get('/api/v1/admin/licenses?product=ERP_SUITE').expect(200);
      expect([other.body, other.headers['x-total-count']]).toEqual([[], '0']);
      const ndjson = await as(reseller).get('/api/v1/admin/licenses/export?format=ndjson').expect(200);
      const rows = ndjson.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { product_code: string });
      expect(rows).toHaveLength(n);
      expect(new Set(rows.map((r) => r.product_code))).toEqual(new Set(['POS_RETAIL']));
    });

    it.each([
      ['GET', (id: number) => `/api/v1/admin/licenses/${id}`, undefined],
      ['GET', (id: number) => `/api/v1/admin/licenses/${id}/activations`, undefined],
      ['PUT', (id: number) => `/api/v1/admin/licenses/${id}`, { notes: 'x' }],
      ['POST', (id: number) => `/api/v1/admin/licenses/${id}/revoke`, { reason: 'x' }],
      ['POST', (id: number) => `/api/v1/admin/licenses/${id}/release`, {}],
    ] as const)("%s %s: another product's licence is 404, its own is found", async (method, url, body) => {
      const call = (id: number) => {
        const req = as(reseller)[method.toLowerCase() as 'get' | 'put' | 'post'](url(id));
        return body ? req.send(body) : req;
      };
      const res = await call(foreign);
      expect([res.status, res.body.error.code]).toEqual([404, 'NOT_FOUND']);
      expect((await call(own)).status).toBe(200);
      // Nothing changed on the other product's licence.
      const [row] = await t.sql<{ revoked: boolean; notes: string | null }>('SELECT revoked, notes FROM licenses WHERE id = $1', [foreign]);
      expect(row).toEqual({ revoked: false, notes: null });
    });

    it('creating a licence of another product is refused like an unknown product', async () => {
      const res = await as(reseller)
        .post('/api/v1/admin/licenses')
        .send({ product_code: 'ERP_SUITE', license_type: 'YEARLY', customer_name: 'X' })
        .expect(400);
      expect(fieldsOf(res.body)).toEqual(['product_code']);
    });

    it("audit list and export show only entries of the token's products", async () => {
      const list = await as(reseller).get('/api/v1/admin/audit?limit=1000').expect(200);
      const entries = list.body as { product_code: string | null; license_id: number | null }[];
      expect(entries.length).toBeGreaterThan(0);
      expect(new Set(entries.map((e) => e.product_code))).toEqual(new Set(['POS_RETAIL']));
      const foreignEntries = await as(reseller).get(`/api/v1/admin/audit?license_id=${foreign}`).expect(200);
      expect(foreignEntries.body).toEqual([]);
      const exported = await as(reseller).get('/api/v1/admin/audit/export?format=ndjson').expect(200);
      const rows = exported.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { product_code: string });
      expect(rows).toHaveLength(Number(list.headers['x-total-count']));
      expect(new Set(rows.map((r) => r.product_code))).toEqual(new Set(['POS_RETAIL']));
    });

    it("attacker: the audit log's product filter naming another product finds nothing, in the list and the export", async () => {
      // The whole key sees the foreign entries, so the empty answers below are the limit, not an empty log.
      expect(
        ((await t.admin.get('/api/v1/admin/audit?product=ERP_SUITE&limit=1000').expect(200)).body as unknown[]).length,
      ).toBeGreaterThan(0);
      for (const query of ['product=ERP_SUITE', `product=ERP_SUITE&license_id=${foreign}`, 'product=ERP_SUITE&action=license.created']) {
        const list = await as(reseller).get(`/api/v1/admin/audit?${query}&limit=1000`).expect(200);
        expect([list.body, list.headers['x-total-count']]).toEqual([[], '0']);
        const exported = await as(reseller).get(`/api/v1/admin/audit/export?${query}&format=ndjson`).expect(200);
        expect(exported.text.trim()).toBe('');
      }
      // An actor filter naming whoever changed the foreign licence finds only the token's own products' entries.
      const [{ actor }] = await t.sql<{ actor: string }>(
        `SELECT actor FROM audit_entries WHERE license_id = $1 AND action = 'license.created'`,
        [foreign],
      );
      const byActor = await as(reseller)
        .get(`/api/v1/admin/audit?${new URLSearchParams({ actor, limit: '1000' }).toString()}`)
        .expect(200);
      expect((byActor.body as { license_id: number | null }[]).some((e) => e.license_id === foreign)).toBe(false);
      expect(new Set((byActor.body as { product_code: string | null }[]).map((e) => e.product_code))).toEqual(new Set(['POS_RETAIL']));
      // Its own product still answers.
      const mine = await as(reseller).get(`/api/v1/admin/audit?product=POS_RETAIL&license_id=${own}&limit=1000`).expect(200);
      expect((mine.body as unknown[]).length).toBeGreaterThan(0);
    });

    it("stats and products show only the token's products; another product is 404", async () => {
      const stats = await as(reseller).get('/api/v1/admin/stats').expect(200);
      expect((stats.body as { product_code: string }[]).map((s) => s.product_code)).toEqual(['POS_RETAIL']);
      const all = await t.admin.get('/api/v1/admin/stats').expect(200);
      expect((all.body as { product_code: string }[]).find((s) => s.product_code === 'POS_RETAIL')).toEqual(stats.body[0]);
      const products = await as(reseller).get('/api/v1/admin/products').expect(200);
      expect((products.body as { code: string }[]).map((p) => p.code)).toEqual(['POS_RETAIL']);
      const [erp] = await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'ERP_SUITE'`);
      await as(reseller).get(`/api/v1/admin/products/${erp.id}`).expect(404);
      await as(reseller).put(`/api/v1/admin/products/${erp.id}`).send({ name: 'Mine now' }).expect(404);
      const create = await as(reseller)
        .post('/api/v1/admin/products')
        .send({ code: 'RESOLD', name: 'Resold', key_prefix: 'RSL' })
        .expect(403);
      expect(create.body.error.code).toBe('FORBIDDEN');
    });
  });
});
