import type { StaffRole } from '../src/staff/roles';
import { UsersService } from '../src/staff/users.service';
import { loggedInAgent, postForm, unescape } from './dashboard-helpers';
import { createLicense, fingerprint } from './support/factories';
import { createTestApp, type TestApp } from './support/test-app';

const PASSWORD = 'staff-password-123';
const DAY = 86_400_000;

/**
 * docs/dashboard.md, Limited accounts and Staff and roles: an account limited to products finds, reads and counts
 * its products everywhere it may go (search, results as you type, customers, statistics, labelled with their names),
 * and every role sees only the controls it may use, with confirmation pages answering 403 like their actions.
 */
describe('dashboard: product-limited accounts and role-gated controls', () => {
  let t: TestApp;
  let erpName: string;
  let erp: { id: number; license_key: string };
  let erpSoon: { id: number; license_key: string };
  let pos: { id: number; license_key: string };
  const SHARED = 'shared.buyer@example.com';
  const POS_ONLY = 'pos.only@example.com';

  const addAccount = async (username: string, role: StaffRole, products: string[] | null = null) => {
    await t.app.get(UsersService).setPassword(username, PASSWORD, role);
    if (products)
      await t.sql(
        `UPDATE users SET product_ids = (SELECT array_agg(id ORDER BY id) FROM products WHERE code = ANY($2)) WHERE username = $1`,
        [username, products],
      );
    const session = await loggedInAgent(t, { username, password: PASSWORD });
    return { ...session, csrf: await session.token('/licenses') };
  };
  const activate = (key: string, seed: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: key, machine_fingerprint: fingerprint(seed), hostname: `host-${seed}` })
      .expect(200);

  beforeAll(async () => {
    t = await createTestApp();
    erpName = (await t.sql<{ name: string }>(`SELECT name FROM products WHERE code = 'ERP_SUITE'`))[0].name;
    erp = await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Shared Buyer', customer_email: SHARED });
    erpSoon = await createLicense(t, {
      product_code: 'ERP_SUITE',
      customer_name: 'Soon Ending',
      expires_at: new Date(Date.now() + 5 * DAY).toISOString(),
    });
    pos = await createLicense(t, {
      product_code: 'POS_RETAIL',
      customer_name: 'Shared Buyer',
      customer_email: SHARED,
      limits: { max_installations: 3 },
    });
    await createLicense(t, { product_code: 'POS_RETAIL', customer_name: 'Pos Only', customer_email: POS_ONLY });
    // POS licences expiring soon too: an all-product count would differ from the ERP one.
    for (let i = 0; i < 3; i++)
      await createLicense(t, {
        product_code: 'POS_RETAIL',
        customer_name: `Pos Soon ${i}`,
        expires_at: new Date(Date.now() + 3 * DAY).toISOString(),
      });
    await activate(erp.license_key, 'erp-1');
    await activate(pos.license_key, 'pos-1');
    await activate(pos.license_key, 'pos-2');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  describe('a viewer limited to ERP_SUITE', () => {
    let viewer: Awaited<ReturnType<typeof addAccount>>;
    beforeAll(async () => {
      viewer = await addAccount('erp-viewer', 'viewer', ['ERP_SUITE']);
    }, 60_000);

    it('searches from the top bar within its products: its licence opens, another product’s is not found', async () => {
      await viewer.agent.get(`/licenses/search?q=${erp.license_key}`).expect(303).expect('Location', `/licenses/${erp.id}`);
      const other = await viewer.agent.get(`/licenses/search?q=${pos.license_key}`).expect(303);
      expect(other.headers.location).toBe(`/licenses?q=${encodeURIComponent(pos.license_key)}`);
      const list = (await viewer.agent.get(other.headers.location).expect(200)).text;
      expect(list).not.toContain(`href="/licenses/${pos.id}"`);
      expect(list).not.toMatch(/data-testid="license-row"|<td[^>]*>POS_RETAIL/);
      // A whole address two of its licences would carry leads to the customer; here one ERP licence: opens it.
      await viewer.agent
        .get(`/licenses/search?q=${encodeURIComponent(SHARED)}`)
        .expect(303)
        .expect('Location', `/licenses/${erp.id}`);
    });

    it('gets results as it types, only of its products (attacker: the POS licence of the same customer stays hidden)', async () => {
      const html = (await viewer.agent.get('/licenses/search/suggest?q=Shared').expect(200)).text;
      expect(html).toContain('data-testid="suggestions"');
      expect(html).toContain(erp.license_key);
      expect(html).not.toContain(pos.license_key);
      expect(html).not.toContain('POS_RETAIL');
    });

    it('opens customer pages from its lists: only its products’ licences, machines and activity', async () => {
      const list = (await viewer.agent.get('/licenses').expect(200)).text;
      const link = /href="(\/licenses\/customer\?[^"]+)" data-testid="customer-link">Shared Buyer/.exec(list)?.[1];
      expect(link).toBeDefined();
      const page = (await viewer.agent.get(unescape(link!)).expect(200)).text;
      expect(page).toContain(erp.license_key);
      expect(page).toContain('host-erp-1');
      expect(page).not.toContain(pos.license_key);
      expect(page).not.toContain('host-pos-1');
      // A viewer is shown no control it cannot use.
      expect(page).not.toContain('href="/licenses/new"');
      expect(page).not.toContain('/confirm/release');
      expect(page).not.toContain('action="/licenses/customer/notes"');
    });

    it('attacker: a customer with licences only of other products is not found (404), notes included', async () => {
      await viewer.agent.get(`/licenses/customer?email=${encodeURIComponent(POS_ONLY)}`).expect(404);
      const support = await addAccount('erp-support', 'support', ['ERP_SUITE']);
      await postForm(support.agent, support.csrf, '/licenses/customer/notes', { email: POS_ONLY, note: 'probing' }).expect(404);
      expect(await t.sql(`SELECT id FROM customer_notes`)).toEqual([]);
      // On its own customer a limited support account adds a note.
      await postForm(support.agent, support.csrf, '/licenses/customer/notes', { email: SHARED, note: 'called about ERP' }).expect(303);
    });

    it('reads statistics of its products, labelled with their names: never "all products", no empty all-product chart', async () => {
      const page = (await viewer.agent.get('/dashboard').expect(200)).text;
      const label = `${erpName} (ERP_SUITE)`;
      expect(page).toContain(`Counting ${label}`);
      expect(page.toLowerCase()).not.toContain('all products');
      expect(page).toContain(`Activations, refusals and new licences per day of ${label}`);
      expect(page).toContain(`Per day: ${label}`);
      expect(page).not.toContain('data-testid="store-attention"');
      expect(page).not.toContain('POS_RETAIL');
      // The daily chart counts its product's activation (one), not zero and not the POS ones (two).
      const chart = /aria-labelledby="daily-heading">([\s\S]*?)<\/section>/.exec(page)![1];
      const activations = [...chart.matchAll(/<td data-label="Activations" class="num">(\d+)<\/td>/g)].reduce(
        (s, m) => s + Number(m[1]),
        0,
      );
      expect(activations).toBe(1);
      // The expiring chart agrees with the list under it: one ERP licence, not the POS ones.
      const panel = /data-testid="expiring-panel"([\s\S]*?)<\/section>/.exec(page)![1];
      const expiringBars = [...panel.matchAll(/<td data-label="Expiring" class="num">(\d+)<\/td>/g)].reduce((s, m) => s + Number(m[1]), 0);
      const listed = panel.match(/data-testid="expiring-row"/g)?.length ?? 0;
      expect(listed).toBe(1);
      expect(panel).toContain(erpSoon.license_key);
      expect(expiringBars).toBe(listed);
      expect(panel).toContain(`(1)</h2>`);
    });

    it('an account of every product still reads every product, labelled "All products"', async () => {
      const owner = await loggedInAgent(t);
      const page = (await owner.agent.get('/dashboard').expect(200)).text;
      expect(page).toContain('<option value="">All products</option>');
      expect(page).not.toContain('data-testid="products-shown"');
      const panel = /data-testid="expiring-panel"([\s\S]*?)<\/section>/.exec(page)![1];
      const bars = [...panel.matchAll(/<td data-label="Expiring" class="num">(\d+)<\/td>/g)].reduce((s, m) => s + Number(m[1]), 0);
      expect(bars).toBe(4);
    });
  });

  describe('controls a role cannot use are not drawn, and their confirmation pages answer 403 like the action', () => {
    it('support: the revoke confirmation is 403 (GET as POST), suspend and release confirmations open; no Releases link', async () => {
      const support = await addAccount('sue', 'support');
      const refused = await support.agent.get(`/licenses/${pos.id}/confirm/revoke`).expect(403);
      expect(refused.text).toContain('Your role (support) cannot do this');
      expect(refused.text).not.toContain(`action="/licenses/${pos.id}/revoke"`);
      await postForm(support.agent, support.csrf, `/licenses/${pos.id}/revoke`, { reason: 'x' }).expect(403);
      await support.agent.get(`/licenses/${pos.id}/confirm/suspend`).expect(200);
      await support.agent.get(`/licenses/${pos.id}/confirm/release-all`).expect(200);
      const products = (await support.agent.get('/products').expect(200)).text;
      expect(products).not.toContain('/releases');
      await support.agent.get('/products/POS_RETAIL/releases').expect(403);
      // Other confirmation pages of admin actions: 403 too.
      await support.agent.get('/signing-keys/rotate').expect(403);
      await support.agent.get('/webhooks/1/delete').expect(403);
      await support.agent.get('/stores/plans/1/delete').expect(403);
    });

    it('viewer: every licence confirmation page is 403; no New licence, Edit or Release controls anywhere it reads', async () => {
      const viewer = await addAccount('vince', 'viewer');
      for (const action of ['revoke', 'suspend', 'release-all'])
        await viewer.agent.get(`/licenses/${pos.id}/confirm/${action}`).expect(403);
      await viewer.agent.get(`/licenses/${pos.id}/confirm/release?machine_fingerprint=${fingerprint('pos-1')}`).expect(403);
      for (const path of ['/dashboard', '/licenses', `/licenses/${pos.id}`, `/licenses/customer?email=${encodeURIComponent(SHARED)}`]) {
        const html = (await viewer.agent.get(path).expect(200)).text;
        expect({ path, newLicence: html.includes('href="/licenses/new"') }).toEqual({ path, newLicence: false });
        expect({ path, confirm: /\/confirm\//.test(html) }).toEqual({ path, confirm: false });
      }
      const products = (await viewer.agent.get('/products').expect(200)).text;
      expect(products).not.toContain('/releases');
    });

    it('admin: the revoke confirmation opens and the Releases links are drawn', async () => {
      const admin = await addAccount('ada', 'admin');
      await admin.agent.get(`/licenses/${pos.id}/confirm/revoke`).expect(200);
      expect((await admin.agent.get('/products').expect(200)).text).toContain('href="/products/POS_RETAIL/releases"');
    });

    it('a support account limited to ERP_SUITE: another product’s licence confirmation is 404, its own opens', async () => {
      const limited = await addAccount('lim-support', 'support', ['ERP_SUITE']);
      await limited.agent.get(`/licenses/${pos.id}/confirm/suspend`).expect(404);
      await limited.agent.get(`/licenses/${erp.id}/confirm/suspend`).expect(200);
      await limited.agent.get(`/licenses/${erp.id}/confirm/revoke`).expect(403);
    });
  });
});
