import { ProductIds1796630000000 } from '../src/database/migrations/1796630000000-product-ids';
import { fieldsOf } from './support/api-errors';
import { asBearer, createLicense, fannedOut } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';
import { startReceiver } from './support/webhook-receiver';

// Deliveries go through the job engine and real HTTP: give them time on a loaded machine.
jest.setTimeout(60_000);

const TOKENS = '/api/v1/admin/tokens';
const WEBHOOKS = '/api/v1/admin/webhooks';

interface CreatedToken {
  id: number;
  name: string;
  products: string[] | null;
  expires_at: string | null;
  token: string;
}

/**
 * The limits of a token limited to products, played as that token (docs/security.md, Review findings (round 3)):
 * its webhooks, the tokens it manages, the tokens it issues, global scopes, and limits that survive a product rename.
 */
describe('product-limited credentials', () => {
  let t: TestApp;
  let sequence = 0;
  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);
  afterAll(() => t.close());

  const issue = async (body: Record<string, unknown>): Promise<CreatedToken> => {
    const res = await t.admin.post(TOKENS).send({ name: `limits-${++sequence}`, ...body });
    if (res.status !== 201) throw new Error(`issue: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as CreatedToken;
  };
  const as = (token: string) => asBearer(t, token);
  const productId = async (code: string) => (await t.sql<{ id: number }>('SELECT id FROM products WHERE code = $1', [code]))[0].id;

  describe('webhook endpoints made by a limited token (finding 1)', () => {
    let allReceiver: Awaited<ReturnType<typeof startReceiver>>;
    let resellerReceiver: Awaited<ReturnType<typeof startReceiver>>;
    let reseller: CreatedToken;
    beforeAll(async () => {
      allReceiver = await startReceiver();
      resellerReceiver = await startReceiver();
      reseller = await issue({ scopes: ['webhooks:manage', 'licenses:read'], products: ['POS_RETAIL'] });
    }, 60_000);
    afterAll(async () => {
      await allReceiver.close();
      await resellerReceiver.close();
    });
    afterEach(async () => {
      await t.sql('DELETE FROM webhook_endpoints');
    });

    // By type, then time: the background fan-out and the test's own pass may each take some of the events, so the
    // deliveries' ids follow whichever pass committed first (and an event's id is random).
    const eventsOf = (endpointId: number) =>
      t.sql<{ type: string; product: string | null; customer: string | null }>(
        `SELECT ev.type, ev.payload->'data'->'product'->>'code' AS product, ev.payload->'data'->>'customer_name' AS customer
         FROM webhook_deliveries d JOIN event_outbox ev ON ev.id = d.event_id WHERE d.endpoint_id = $1 ORDER BY ev.type, ev.created_at`,
        [endpointId],
      );

    it("a reseller's '*' endpoint receives only its products' events, never another product's licence or a token event", async () => {
      const all = (
        await t.admin
          .post(WEBHOOKS)
          .send({ url: allReceiver.url, events: ['*'] })
          .expect(201)
      ).body as { id: number };
      const created = await as(reseller.token)
        .post(WEBHOOKS)
        .send({ url: resellerReceiver.url, events: ['*'] })
        .expect(201);
      expect(created.body).toMatchObject({ events: ['*'], products: ['POS_RETAIL'] });
      const mine = created.body as { id: number };
      expect((await t.admin.get(`${WEBHOOKS}/${all.id}`).expect(200)).body.products).toBeNull();

      const erp = await createLicense(t, {
        product_code: 'ERP_SUITE',
        customer_name: 'Erp Secret Customer',
        customer_email: 'ceo@erp.example',
      });
      const pos = await createLicense(t, { product_code: 'POS_RETAIL', customer_name: 'Pos Own Customer' });
      await t.admin
        .put(`/api/v1/admin/products/${await productId('ERP_SUITE')}`)
        .send({ name: 'ERP Suite' })
        .expect(200);
      await t.admin
        .put(`/api/v1/admin/products/${await productId('POS_RETAIL')}`)
        .send({ name: 'Retail Point of Sale' })
        .expect(200);
      await issue({ scopes: ['stats:read'] });

      // After the fan-out, the deliveries are what each endpoint will ever be sent.
      await fannedOut(t);
      expect(await eventsOf(mine.id)).toEqual([
        { type: 'license.created', product: 'POS_RETAIL', customer: 'Pos Own Customer' },
        { type: 'product.updated', product: null, customer: null },
      ]);
      const [productEvent] = await t.sql<{ code: string }>(
        `SELECT ev.payload->'data'->>'product_code' AS code FROM webhook_deliveries d JOIN event_outbox ev ON ev.id = d.event_id
         WHERE d.endpoint_id = $1 AND ev.type = 'product.updated'`,
        [mine.id],
      );
      expect(productEvent.code).toBe('POS_RETAIL');
      const allTypes = (await eventsOf(all.id)).map((e) => `${e.type}:${e.product ?? e.customer ?? '-'}`);
      expect(allTypes).toEqual(
        expect.arrayContaining(['webhook.created:-', 'license.created:ERP_SUITE', 'license.created:POS_RETAIL', 'token.created:-']),
      );
      // And over the wire: the reseller's receiver gets its licence, never the other product's customer.
      const hooks = await resellerReceiver.waitFor(2);
      expect(hooks.map((h) => h.body).join('\n')).not.toMatch(/Erp Secret|ceo@erp|ERP_SUITE/);
      expect(hooks.some((h) => h.body.includes(String(pos.license_key)))).toBe(true);
      expect(hooks.some((h) => h.body.includes(String(erp.license_key)))).toBe(false);
    });

    it('cannot see, re-point, rotate, delete, read the deliveries of or retry an endpoint made with the API key: 404, nothing changed', async () => {
      const victim = (
        await t.admin
          .post(WEBHOOKS)
          .send({ url: allReceiver.url, events: ['license.created'] })
          .expect(201)
      ).body as {
        id: number;
        secret: string;
      };
      await createLicense(t, { product_code: 'ERP_SUITE' });
      await fannedOut(t);
      await allReceiver.waitFor(1, (h) => h.body.includes('license.created'));
      const [delivery] = await t.sql<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE endpoint_id = $1`, [victim.id]);
      await t.sql(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = $1`, [delivery.id]);
      const before = await t.sql(`SELECT url, secret, events, active FROM webhook_endpoints WHERE id = $1`, [victim.id]);

      const own = (
        await as(reseller.token)
          .post(WEBHOOKS)
          .send({ url: resellerReceiver.url, events: ['license.created'] })
          .expect(201)
      ).body as { id: number };
      const listed = (await as(reseller.token).get(WEBHOOKS).expect(200)).body as { id: number }[];
      expect(listed.map((e) => e.id)).toEqual([own.id]);
      const attempts = [
        await as(reseller.token).get(`${WEBHOOKS}/${victim.id}`),
        await as(reseller.token).put(`${WEBHOOKS}/${victim.id}`).send({ url: resellerReceiver.url }),
        await as(reseller.token).post(`${WEBHOOKS}/${victim.id}/rotate-secret`),
        await as(reseller.token).get(`${WEBHOOKS}/${victim.id}/deliveries`),
        await as(reseller.token).post(`/api/v1/admin/webhook-deliveries/${delivery.id}/retry`),
        await as(reseller.token).delete(`${WEBHOOKS}/${victim.id}`),
      ];
      expect(attempts.map((r) => [r.status, r.body.error?.code])).toEqual(Array(6).fill([404, 'NOT_FOUND']));
      expect(await t.sql(`SELECT url, secret, events, active FROM webhook_endpoints WHERE id = $1`, [victim.id])).toEqual(before);
      expect((await t.sql(`SELECT status FROM webhook_deliveries WHERE id = $1`, [delivery.id]))[0].status).toBe('failed');
      // Its own endpoint it manages as usual.
      await as(reseller.token).put(`${WEBHOOKS}/${own.id}`).send({ description: 'mine' }).expect(200);
      await as(reseller.token).get(`${WEBHOOKS}/${own.id}/deliveries`).expect(200);
      await as(reseller.token).post(`${WEBHOOKS}/${own.id}/rotate-secret`).expect(200);
    });

    it("an endpoint for more products than the token's is out of its reach; one for fewer is within", async () => {
      const wide = await issue({ scopes: ['webhooks:manage'], products: ['POS_RETAIL', 'ERP_SUITE'] });
      const wideEndpoint = (
        await as(wide.token)
          .post(WEBHOOKS)
          .send({ url: allReceiver.url, events: ['*'] })
          .expect(201)
      ).body as {
        id: number;
        products: string[];
      };
      expect([...wideEndpoint.products].sort()).toEqual(['ERP_SUITE', 'POS_RETAIL']);
      const narrow = (
        await as(reseller.token)
          .post(WEBHOOKS)
          .send({ url: resellerReceiver.url, events: ['*'] })
          .expect(201)
      ).body as {
        id: number;
      };
      await as(reseller.token).get(`${WEBHOOKS}/${wideEndpoint.id}`).expect(404);
      await as(wide.token).get(`${WEBHOOKS}/${narrow.id}`).expect(200);
      expect(((await as(wide.token).get(WEBHOOKS).expect(200)).body as { id: number }[]).map((e) => e.id).sort()).toEqual(
        [wideEndpoint.id, narrow.id].sort(),
      );
    });
  });

  describe('tokens:manage limited to products (finding 2)', () => {
    it('lists and revokes only tokens within its products, and issues none for other or all products', async () => {
      const manager = await issue({ scopes: ['tokens:manage', 'licenses:read'], products: ['POS_RETAIL'] });
      const pos = await issue({ scopes: ['licenses:read'], products: ['POS_RETAIL'] });
      const erp = await issue({ scopes: ['licenses:read'], products: ['ERP_SUITE'] });
      const both = await issue({ scopes: ['licenses:read'], products: ['POS_RETAIL', 'ERP_SUITE'] });
      const every = await issue({ scopes: ['licenses:read'] });

      const list = await as(manager.token).get(`${TOKENS}?limit=1000`).expect(200);
      const ids = (list.body as { id: number }[]).map((x) => x.id);
      expect(ids).toEqual(expect.arrayContaining([manager.id, pos.id]));
      for (const hidden of [erp, both, every]) expect(ids).not.toContain(hidden.id);
      expect(Number(list.headers['x-total-count'])).toBe(ids.length);

      for (const other of [erp, both, every]) {
        const res = await as(manager.token).delete(`${TOKENS}/${other.id}`);
        expect([res.status, res.body.error.code]).toEqual([404, 'NOT_FOUND']);
      }
      const stillActive = await t.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM admin_tokens WHERE id = ANY($1) AND revoked_at IS NULL',
        [[erp.id, both.id, every.id]],
      );
      expect(stillActive[0].n).toBe(3);
      await as(every.token).get('/api/v1/admin/licenses').expect(200);
      await as(manager.token).delete(`${TOKENS}/${pos.id}`).expect(200);

      for (const products of [undefined, null, ['ERP_SUITE'], ['POS_RETAIL', 'ERP_SUITE'], ['NO_SUCH_PRODUCT']]) {
        const res = await as(manager.token)
          .post(TOKENS)
          .send({ name: `from-limited-${++sequence}`, scopes: ['licenses:read'], ...(products === undefined ? {} : { products }) });
        expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
      }
    });
  });

  describe('a token never issues one that outlives it (finding 3)', () => {
    it('no expiry or a later one: 400 on expires_at; the same or an earlier one: 201; API keys may issue for ever', async () => {
      const expiry = new Date(Date.now() + 3_600_000);
      const issuer = await issue({ scopes: ['tokens:manage', 'stats:read'], expires_at: expiry.toISOString() });
      const child = (body: Record<string, unknown>) =>
        as(issuer.token)
          .post(TOKENS)
          .send({ name: `child-${++sequence}`, scopes: ['stats:read'], ...body });
      for (const body of [{}, { expires_at: null }, { expires_at: new Date(expiry.getTime() + 1000).toISOString() }]) {
        const res = await child(body);
        expect([res.status, res.body.error.code, fieldsOf(res.body)]).toEqual([400, 'VALIDATION_ERROR', ['expires_at']]);
      }
      expect(await t.sql(`SELECT 1 FROM admin_tokens WHERE name LIKE 'child-%' AND expires_at IS NULL`)).toEqual([]);
      await child({ expires_at: expiry.toISOString() }).expect(201);
      await child({ expires_at: new Date(expiry.getTime() - 60_000).toISOString() }).expect(201);
      expect((await issue({ scopes: ['stats:read'] })).expires_at).toBeNull();
    });
  });

  describe('global scopes need a credential for every product (finding 4)', () => {
    it('issuing signing-keys:manage with products is 400; a stored one is 403 on the signing-key routes', async () => {
      const res = await t.admin
        .post(TOKENS)
        .send({ name: `global-${++sequence}`, scopes: ['signing-keys:manage'], products: ['POS_RETAIL'] })
        .expect(400);
      expect([res.body.error.code, fieldsOf(res.body)]).toEqual(['VALIDATION_ERROR', ['scopes']]);

      // A token stored before the rule: limited, yet holding the global scope.
      const legacy = await issue({ scopes: ['stats:read'], products: ['POS_RETAIL'] });
      await t.sql(`UPDATE admin_tokens SET scopes = ARRAY['stats:read', 'signing-keys:manage'] WHERE id = $1`, [legacy.id]);
      for (const call of [as(legacy.token).get('/api/v1/admin/signing-keys'), as(legacy.token).post('/api/v1/admin/signing-keys/rotate')]) {
        const denied = await call;
        expect([denied.status, denied.body.error.code, denied.body.error.details]).toEqual([
          403,
          'FORBIDDEN',
          { required_scope: 'signing-keys:manage' },
        ]);
      }
      expect(await t.sql(`SELECT 1 FROM audit_entries WHERE action LIKE 'signing_key.%'`)).toEqual([]);
      // The same token for every product passes: the product limit is what refuses it.
      await t.sql(`UPDATE admin_tokens SET product_ids = NULL WHERE id = $1`, [legacy.id]);
      await as(legacy.token).get('/api/v1/admin/signing-keys').expect(200);
    });
  });

  describe('a product limit follows the product, not its code (finding 5)', () => {
    it('after a rename and a new product with the old code, each token sees only its own product', async () => {
      const p = (await t.admin.post('/api/v1/admin/products').send({ code: 'RENAME_X', name: 'Renamed', key_prefix: 'RNX' }).expect(201))
        .body as { id: number };
      const pLicense = await createLicense(t, { product_code: 'RENAME_X', customer_name: 'Customer of P' });
      const old = await issue({ scopes: ['licenses:read', 'audit:read'], products: ['RENAME_X'] });
      await t.admin.put(`/api/v1/admin/products/${p.id}`).send({ code: 'RENAME_Y' }).expect(200);
      const q = (await t.admin.post('/api/v1/admin/products').send({ code: 'RENAME_X', name: 'Newcomer', key_prefix: 'RNQ' }).expect(201))
        .body as { id: number };
      const qLicense = await createLicense(t, { product_code: 'RENAME_X', customer_name: 'Customer of Q' });
      const newcomer = await issue({ scopes: ['licenses:read', 'audit:read'], products: ['RENAME_X'] });

      const licenceIds = async (token: string) =>
        ((await as(token).get('/api/v1/admin/licenses?limit=1000').expect(200)).body as { id: number }[]).map((l) => l.id);
      expect(await licenceIds(old.token)).toEqual([pLicense.id]);
      await as(old.token).get(`/api/v1/admin/licenses/${qLicense.id}`).expect(404);
      expect(await licenceIds(newcomer.token)).toEqual([qLicense.id]);

      type Entry = { action: string; license_id: number | null; details: { product_id?: number } };
      const audit = async (token: string) => (await as(token).get('/api/v1/admin/audit?limit=1000').expect(200)).body as Entry[];
      const newcomerAudit = await audit(newcomer.token);
      expect(newcomerAudit.filter((e) => e.license_id === pLicense.id || e.details.product_id === p.id)).toEqual([]);
      expect(newcomerAudit.map((e) => e.action).sort()).toEqual(['license.created', 'product.created']);
      const oldAudit = await audit(old.token);
      expect(oldAudit.filter((e) => e.license_id === qLicense.id || e.details.product_id === q.id)).toEqual([]);
      expect(oldAudit.map((e) => e.action).sort()).toEqual(['license.created', 'product.created', 'product.updated']);

      // Shown by the products' current codes.
      const listed = (await t.admin.get(`${TOKENS}?limit=1000`).expect(200)).body as { id: number; products: string[] | null }[];
      expect(listed.find((x) => x.id === old.id)?.products).toEqual(['RENAME_Y']);
      expect(listed.find((x) => x.id === newcomer.id)?.products).toEqual(['RENAME_X']);
      expect((await t.sql(`SELECT product_ids FROM admin_tokens WHERE id = $1`, [old.id]))[0].product_ids).toEqual([p.id]);
    });

    it('the migration turns stored codes into ids (an unknown code into nothing) and limits endpoints a limited token made', async () => {
      const migration = new ProductIds1796630000000();
      const runner = t.dataSource.createQueryRunner();
      try {
        await migration.down(runner);
        await runner.query(
          `INSERT INTO admin_tokens (name, token_hash, scopes, products) VALUES
             ('legacy-pos', repeat('a', 64), ARRAY['webhooks:manage'], ARRAY['POS_RETAIL']),
             ('legacy-gone', repeat('b', 64), ARRAY['licenses:read'], ARRAY['GONE_CODE']),
             ('legacy-all', repeat('c', 64), ARRAY['licenses:read'], NULL)`,
        );
        const [endpoint] = (await runner.query(
          `INSERT INTO webhook_endpoints (url, events, secret) VALUES ('https://hooks.example/a', ARRAY['*'], 'whsec_x') RETURNING id`,
        )) as { id: number }[];
        const [keyEndpoint] = (await runner.query(
          `INSERT INTO webhook_endpoints (url, events, secret) VALUES ('https://hooks.example/b', ARRAY['*'], 'whsec_y') RETURNING id`,
        )) as { id: number }[];
        await runner.query(
          `INSERT INTO audit_entries (action, actor_type, actor, details) VALUES
             ('webhook.created', 'admin_api', 'token:legacy-pos', jsonb_build_object('webhook_id', $1::int)),
             ('webhook.created', 'admin_api', 'key:0123abcd', jsonb_build_object('webhook_id', $2::int))`,
          [endpoint.id, keyEndpoint.id],
        );
        await migration.up(runner);
        const tokens = await t.sql<{ name: string; product_ids: number[] | null }>(
          `SELECT name, product_ids FROM admin_tokens WHERE name LIKE 'legacy-%' ORDER BY name`,
        );
        expect(tokens).toEqual([
          { name: 'legacy-all', product_ids: null },
          { name: 'legacy-gone', product_ids: [] },
          { name: 'legacy-pos', product_ids: [await productId('POS_RETAIL')] },
        ]);
        const endpoints = await t.sql<{ id: number; product_ids: number[] | null }>(
          `SELECT id, product_ids FROM webhook_endpoints WHERE id = ANY($1) ORDER BY id`,
          [[endpoint.id, keyEndpoint.id]],
        );
        expect(endpoints).toEqual([
          { id: endpoint.id, product_ids: [await productId('POS_RETAIL')] },
          { id: keyEndpoint.id, product_ids: null },
        ]);
      } finally {
        await runner.release();
      }
    });
  });
});
