import { AuditService } from '../../src/audit/audit.service';
import { EventRecorder } from '../../src/events/event-recorder';
import type { Actor } from '../../src/common/auth/actor';
import { encodeCursor } from '../../src/common/http/keyset-cursor';
import { CreateProductDto } from '../../src/products/dto/product.dto';
import { ProductsService } from '../../src/products/products.service';
import { ADMIN_ACTOR, createServiceHarness, issueLicense, productId, ServiceHarness } from '../support/service-harness';
import { ACTOR_MAX_LENGTH as AUDIT_ACTOR_MAX_LENGTH } from '../../src/common/event-vocabulary';

/**
 * The audit log through EventRecorder (writes) and AuditService (reads) on real PostgreSQL (docs/webhooks.md, The event
 * spine; docs/security.md, Review findings (round 3) for product limits by id).
 */
describe('audit log (integration)', () => {
  let h: ServiceHarness;
  let recorder: EventRecorder;
  let audit: AuditService;
  let pos: number;
  let erp: number;

  beforeAll(async () => {
    h = await createServiceHarness();
    recorder = h.get(EventRecorder);
    audit = h.get(AuditService);
    pos = await productId(h, 'POS_RETAIL');
    erp = await productId(h, 'ERP_SUITE');
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 60_000);

  const actor = (name: string): Actor => ({ type: 'admin_api', name, ip: '127.0.0.1' });
  const count = async (table: string, where: string, params: unknown[]) =>
    (await h.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params))[0].n;

  describe('recording', () => {
    it('one call writes the audit entry and the outbox row; auth.* and staff.* stay out of the outbox, time-driven events are audited too', async () => {
      const lic = await issueLicense(h);
      await recorder.record(
        undefined,
        {
          type: 'license.updated',
          actor: actor('rec-both'),
          licenseId: lic.id,
          productId: pos,
          productCode: 'POS_RETAIL',
          details: { n: 1 },
        },
        { type: 'auth.login', actor: actor('rec-auth'), details: {} },
        { type: 'staff.joined', actor: actor('rec-staff'), details: { username: 'ana' } },
        { type: 'license.expired', actor: actor('rec-time'), licenseId: lic.id, productId: pos, details: {} },
      );
      expect(await count('audit_entries', `actor = 'rec-both' AND action = 'license.updated' AND license_id = $1`, [lic.id])).toBe(1);
      expect(await count('audit_entries', `actor = 'rec-auth'`, [])).toBe(1);
      expect(await count('audit_entries', `actor = 'rec-staff' AND action = 'staff.joined'`, [])).toBe(1);
      expect(await count('audit_entries', `actor = 'rec-time' AND action = 'license.expired'`, [])).toBe(1);
      const outbox = await h.sql(
        `SELECT type, product_id, payload FROM event_outbox WHERE license_id = $1 AND type <> 'license.created' ORDER BY type`,
        [lic.id],
      );
      expect(outbox.map((e) => [e.type, e.product_id])).toEqual([
        ['license.expired', pos],
        ['license.updated', pos],
      ]);
      expect(await count('event_outbox', `type IN ('auth.login', 'staff.joined')`, [])).toBe(0);
    });

    it('attacker: events recorded in a transaction that rolls back leave no audit entry and no outbox row', async () => {
      const lic = await issueLicense(h);
      await expect(
        h.transaction(async (manager) => {
          await recorder.record(manager, {
            type: 'license.revoked',
            actor: actor('rolled-back'),
            licenseId: lic.id,
            productId: pos,
            details: {},
          });
          throw new Error('the change failed after its events');
        }),
      ).rejects.toThrow('the change failed');
      expect(await count('audit_entries', `actor = 'rolled-back'`, [])).toBe(0);
      expect(await count('event_outbox', `license_id = $1 AND type = 'license.revoked'`, [lic.id])).toBe(0);
    });

    it('the actor name and IP are cut to their columns, so an oversized name cannot make the change fail', async () => {
      await recorder.record(undefined, {
        type: 'token.created',
        actor: { type: 'admin_api', name: 'x'.repeat(500), ip: '1'.repeat(80) },
        details: {},
      });
      const [row] = await h.sql(
        `SELECT length(actor) AS a, length(ip) AS i FROM audit_entries WHERE action = 'token.created' ORDER BY id DESC LIMIT 1`,
      );
      expect(row).toEqual({ a: AUDIT_ACTOR_MAX_LENGTH, i: 45 });
    });
  });

  describe('listing with product limits', () => {
    let posLicence: number;
    let erpLicence: number;

    beforeAll(async () => {
      posLicence = (await issueLicense(h, { customer_name: 'Audit POS' })).id;
      erpLicence = (await issueLicense(h, { product_code: 'ERP_SUITE', customer_name: 'Audit ERP' })).id;
      const products = h.get(ProductsService);
      // Another product's own entry (product.created names it by id only).
      await products.createProduct(
        Object.assign(new CreateProductDto(), { code: 'AUDIT_ADDON', name: 'Audit addon', key_prefix: 'AUD' }),
        ADMIN_ACTOR,
      );
      // A product entry whose stored code reads POS_RETAIL but whose id is ERP's: a renamed code must not leak it.
      await recorder.record(undefined, {
        type: 'product.updated',
        actor: actor('renamed'),
        productCode: 'POS_RETAIL',
        details: { product_id: erp, changes: { code: 'POS_RETAIL' } },
      });
      await recorder.record(undefined, { type: 'token.created', actor: actor('no-product'), details: {} });
    }, 60_000);

    /** Which product each visible entry belongs to: its licence's product, or the product id it names. */
    async function productsOf(ids: number[]): Promise<(number | null)[]> {
      const rows = await h.sql<{ product: number | null }>(
        `SELECT coalesce(l.product_id, (a.details->>'product_id')::int) AS product
         FROM audit_entries a LEFT JOIN licenses l ON l.id = a.license_id WHERE a.id = ANY($1::bigint[])`,
        [ids],
      );
      return [...new Set(rows.map((r) => r.product))];
    }

    it('attacker: a credential limited to POS_RETAIL sees only POS_RETAIL entries: no other product’s, none without a product', async () => {
      const page = await audit.listEntries({ limit: 1000 }, [pos]);
      expect(page.items.length).toBeGreaterThan(0);
      expect(await productsOf(page.items.map((e) => e.id))).toEqual([pos]);
      expect(page.items.map((e) => e.actor)).not.toContain('renamed');
      expect(page.items.map((e) => e.actor)).not.toContain('no-product');
      expect(page.total).toBe(page.items.length);
    });

    it('attacker: naming another product’s licence under a limited credential finds nothing', async () => {
      expect((await audit.listEntries({ license_id: erpLicence }, [pos])).items).toEqual([]);
      expect((await audit.listEntries({ license_id: erpLicence }, [pos, erp])).items.map((e) => e.action)).toEqual(['license.created']);
    });

    it('a product’s own entries are found by the id they carry, whatever code they show', async () => {
      const erpView = await audit.listEntries({ action: 'product.updated', limit: 100 }, [erp]);
      expect(erpView.items.map((e) => e.actor)).toEqual(['renamed']);
    });

    it('an unlimited credential sees every entry, those without a product included', async () => {
      const all = await audit.listEntries({ limit: 1000 });
      const actors = all.items.map((e) => e.actor);
      expect(actors).toEqual(expect.arrayContaining(['renamed', 'no-product']));
      expect(all.items.map((e) => e.license_id)).toEqual(expect.arrayContaining([posLicence, erpLicence]));
    });
  });

  describe('filters and paging', () => {
    it('action and actor type filters combine with AND; from and to are inclusive bounds', async () => {
      const lic = await issueLicense(h);
      await recorder.record(undefined, {
        type: 'license.updated',
        actor: actor('filter-1'),
        licenseId: lic.id,
        productId: pos,
        details: {},
      });
      await recorder.record(undefined, {
        type: 'license.updated',
        actor: { type: 'dashboard', name: 'filter-2', ip: null },
        licenseId: lic.id,
        productId: pos,
        details: {},
      });
      const updated = await audit.listEntries({ license_id: lic.id, action: 'license.updated' });
      expect(updated.items.map((e) => e.actor)).toEqual(['filter-2', 'filter-1']);
      expect(
        (await audit.listEntries({ license_id: lic.id, action: 'license.updated', actor_type: 'dashboard' })).items.map((e) => e.actor),
      ).toEqual(['filter-2']);
      const [newer, older] = updated.items;
      // The database's microsecond instants, as the API shows them: exact, inclusive bounds.
      const instant = async (id: number) =>
        (
          await h.sql<{ t: string }>(
            `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t FROM audit_entries WHERE id = $1`,
            [id],
          )
        )[0].t;
      const olderAt = await instant(older.id);
      const newerAt = await instant(newer.id);
      expect((await audit.listEntries({ license_id: lic.id, action: 'license.updated', from: newerAt })).items.map((e) => e.actor)).toEqual(
        ['filter-2'],
      );
      expect((await audit.listEntries({ license_id: lic.id, action: 'license.updated', to: olderAt })).items.map((e) => e.actor)).toEqual([
        'filter-1',
      ]);
    });

    it('from after to is refused with VALIDATION_ERROR naming from', async () => {
      await expect(audit.listEntries({ from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' })).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        status: 400,
        details: { fields: [expect.objectContaining({ field: 'from' })] },
      });
    });

    it('the keyset cursor walks a licence’s entries newest first, each once, including entries of one transaction (same instant)', async () => {
      const lic = await issueLicense(h);
      await h.transaction((manager) =>
        recorder.record(
          manager,
          ...Array.from({ length: 5 }, (_, i) => ({
            type: 'license.updated' as const,
            actor: actor(`page-${i}`),
            licenseId: lic.id,
            productId: pos,
            details: {},
          })),
        ),
      );
      const seen: string[] = [];
      let after: string | undefined;
      for (let i = 0; i < 20; i++) {
        const page = await audit.listEntries({ license_id: lic.id, limit: 2, after });
        seen.push(...page.items.map((e) => e.action + ':' + String(e.actor)));
        if (!page.next) break;
        after = encodeCursor(page.next);
      }
      expect(seen).toEqual([...[4, 3, 2, 1, 0].map((i) => `license.updated:page-${i}`), 'license.created:integration']);
    });
  });
});
