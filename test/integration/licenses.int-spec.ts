import { encodeCursor } from '../../src/common/http/keyset-cursor';
import { LICENSE_STATUSES, type LicenseStatus } from '../../src/licenses/license-status';
import { LicenseListQuery, LicensesService } from '../../src/licenses/licenses.service';
import { createServiceHarness, issueLicense, productId, ServiceHarness } from '../support/service-harness';

/**
 * Licence list queries through LicensesService on real PostgreSQL: the status computed in SQL, filters, product limits
 * and keyset paging (docs/licences.md, Status and grace; Reading and listing). Each test tags its customers and searches
 * for the tag, so the licences of other tests in the file never match.
 */
describe('LicensesService lists (integration)', () => {
  let h: ServiceHarness;
  let licenses: LicensesService;

  beforeAll(async () => {
    h = await createServiceHarness();
    licenses = h.get(LicensesService);
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 60_000);

  const list = (query: LicenseListQuery, products: readonly number[] | null = null) => licenses.listLicenses(query, products);
  const names = async (query: LicenseListQuery, products: readonly number[] | null = null) =>
    (await list(query, products)).items.map((i) => i.customer_name).sort();

  /** One licence per status (and the edges between them), named after what it should be; times set in SQL relative to now(). */
  async function licencesInEveryStatus(tag: string) {
    const make = async (name: string, sql: string | null) => {
      const lic = await issueLicense(h, { customer_name: `${tag} ${name}` });
      if (sql) await h.sql(`UPDATE licenses SET ${sql} WHERE id = $1`, [lic.id]);
      return lic;
    };
    await make('active', null);
    await make('active-perpetual', `license_type = 'PERPETUAL', expires_at = NULL`);
    await make('grace', `expires_at = now() - interval '1 day', grace_days = 7`);
    await make('grace-last-hour', `expires_at = now() - interval '7 days' + interval '1 hour', grace_days = 7`);
    await make('expired', `expires_at = now() - interval '8 days', grace_days = 7`);
    await make('expired-no-grace', `expires_at = now() - interval '1 second', grace_days = 0`);
    await make('suspended', `active = false`);
    await make('suspended-and-expired', `active = false, expires_at = now() - interval '30 days', grace_days = 0`);
    await make('revoked', `revoked = true, revoked_at = now()`);
    await make('revoked-and-suspended', `revoked = true, revoked_at = now(), active = false`);
  }

  const EXPECTED: Record<LicenseStatus, string[]> = {
    active: ['active', 'active-perpetual'],
    grace: ['grace', 'grace-last-hour'],
    expired: ['expired', 'expired-no-grace'],
    suspended: ['suspended', 'suspended-and-expired'],
    revoked: ['revoked', 'revoked-and-suspended'],
  };

  describe('status', () => {
    beforeAll(() => licencesInEveryStatus('Status'), 60_000);

    it.each(LICENSE_STATUSES)(
      'status=%s selects exactly the licences in that status (revoked > suspended > expired > grace > active)',
      async (status) => {
        expect(await names({ q: 'Status', status })).toEqual(EXPECTED[status].map((n) => `Status ${n}`).sort());
      },
    );

    it('every row shows the status its filter selects it by, and the single-licence read agrees with the list', async () => {
      const page = await list({ q: 'Status', limit: 100 });
      expect(page.items).toHaveLength(10);
      for (const item of page.items) {
        const expected = LICENSE_STATUSES.find((s) => EXPECTED[s].includes(item.customer_name.replace('Status ', '')));
        expect({ name: item.customer_name, status: item.status }).toEqual({ name: item.customer_name, status: expected });
        expect((await licenses.getLicense(item.id)).status).toBe(item.status);
      }
    });

    it('grace_days counts days from expires_at: a minute before a 1-day grace ends is grace, a minute after it is expired', async () => {
      const lic = await issueLicense(h, { customer_name: 'Edge grace' });
      await h.sql(`UPDATE licenses SET expires_at = now() - interval '23 hours 59 minutes', grace_days = 1 WHERE id = $1`, [lic.id]);
      expect((await list({ q: 'Edge grace' })).items.map((i) => i.status)).toEqual(['grace']);
      await h.sql(`UPDATE licenses SET expires_at = now() - interval '24 hours 1 minute' WHERE id = $1`, [lic.id]);
      expect((await list({ q: 'Edge grace' })).items.map((i) => i.status)).toEqual(['expired']);
      expect(await names({ q: 'Edge grace', status: 'grace' })).toEqual([]);
    });
  });

  describe('filters and product limits', () => {
    beforeAll(async () => {
      await issueLicense(h, { customer_name: 'Filter pos yearly' });
      await issueLicense(h, { customer_name: 'Filter pos trial', license_type: 'TRIAL' });
      await issueLicense(h, { customer_name: 'Filter erp yearly', product_code: 'ERP_SUITE' });
      await issueLicense(h, { customer_name: 'Filter bridge perpetual', product_code: 'FISCAL_BRIDGE', license_type: 'PERPETUAL' });
    }, 60_000);

    it('filters combine with AND: product, type and search text', async () => {
      expect(await names({ q: 'Filter', product: 'POS_RETAIL' })).toEqual(['Filter pos trial', 'Filter pos yearly']);
      expect(await names({ q: 'Filter', license_type: 'YEARLY' })).toEqual(['Filter erp yearly', 'Filter pos yearly']);
      expect(await names({ q: 'Filter', product: 'POS_RETAIL', license_type: 'TRIAL' })).toEqual(['Filter pos trial']);
      expect(await names({ q: 'filter ERP' })).toEqual(['Filter erp yearly']);
    });

    it('the search is literal: % and _ match only themselves', async () => {
      expect(await names({ q: 'Filter%' })).toEqual([]);
      expect(await names({ q: 'Filter_pos' })).toEqual([]);
    });

    it('attacker: a credential limited to POS_RETAIL never lists another product’s licence, not even by naming that product', async () => {
      const pos = await productId(h, 'POS_RETAIL');
      expect(await names({ q: 'Filter' }, [pos])).toEqual(['Filter pos trial', 'Filter pos yearly']);
      expect(await names({ q: 'Filter', product: 'ERP_SUITE' }, [pos])).toEqual([]);
      expect((await list({ q: 'Filter erp' }, [pos])).total).toBe(0);
      const erp = (await list({ q: 'Filter erp' })).items[0];
      await expect(licenses.getLicense(erp.id, [pos])).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
    });
  });

  describe('keyset cursors', () => {
    /** Follows `next` from page to page, as a client following Link rel="next" does. */
    async function walk(query: LicenseListQuery, limit: number, between?: (page: number) => Promise<void>) {
      const seen: string[] = [];
      let after: string | undefined;
      for (let pageNo = 0; pageNo < 50; pageNo++) {
        const page = await list({ ...query, limit, after });
        seen.push(...page.items.map((i) => i.customer_name));
        if (!page.next) return seen;
        after = encodeCursor(page.next);
        await between?.(pageNo);
      }
      throw new Error('the cursor never ended');
    }

    it('following the cursor visits every match once, newest first, and the last page has no cursor', async () => {
      for (let i = 1; i <= 7; i++) await issueLicense(h, { customer_name: `Keyset walk ${i}` });
      expect(await walk({ q: 'Keyset walk' }, 3)).toEqual([7, 6, 5, 4, 3, 2, 1].map((i) => `Keyset walk ${i}`));
    });

    it('licences created with the same instant are neither skipped nor repeated (the id breaks the tie)', async () => {
      const ids: number[] = [];
      for (let i = 1; i <= 6; i++) ids.push((await issueLicense(h, { customer_name: `Keyset tie ${i}` })).id);
      await h.sql(`UPDATE licenses SET created_at = '2026-01-01T00:00:00Z' WHERE id = ANY($1)`, [ids]);
      expect(await walk({ q: 'Keyset tie' }, 4)).toEqual([6, 5, 4, 3, 2, 1].map((i) => `Keyset tie ${i}`));
      expect(await walk({ q: 'Keyset tie' }, 1)).toEqual([6, 5, 4, 3, 2, 1].map((i) => `Keyset tie ${i}`));
    });

    it('licences created while a client pages do not shift the pages after its cursor (no row seen twice)', async () => {
      for (let i = 1; i <= 5; i++) await issueLicense(h, { customer_name: `Keyset live ${i}` });
      let added = 0;
      const seen = await walk({ q: 'Keyset live' }, 2, async () => {
        added += 1;
        await issueLicense(h, { customer_name: `Keyset live new ${added}` });
      });
      expect(seen).toEqual([5, 4, 3, 2, 1].map((i) => `Keyset live ${i}`));
    });

    it('a cursor keeps the filters it is used with: a status-filtered walk stays in that status', async () => {
      const ids: number[] = [];
      for (let i = 1; i <= 4; i++) ids.push((await issueLicense(h, { customer_name: `Keyset mixed ${i}` })).id);
      await h.sql(`UPDATE licenses SET active = false WHERE id = ANY($1)`, [[ids[0], ids[2]]]);
      expect(await walk({ q: 'Keyset mixed', status: 'suspended' }, 1)).toEqual(['Keyset mixed 3', 'Keyset mixed 1']);
    });
  });
});
