import { AuditService } from '../src/audit/audit.service';
import { CustomersService } from '../src/licenses/customers.service';
import { Agent, loggedInAgent, postForm, unescape } from './dashboard-helpers';
import { asBearer, createLicense, fingerprint, insertSeat } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/** A customer's page (docs/dashboard.md, A customer's page): licences, machines, activity and notes of one customer. */
describe('dashboard: the customer page', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;
  let pos: { id: number; license_key: string };
  let erp: { id: number; license_key: string };
  let other: { id: number; license_key: string };
  const page = (email: string, extra = '') => agent.get(`/licenses/customer?email=${encodeURIComponent(email)}${extra}`);

  beforeAll(async () => {
    t = await createTestApp();
    pos = await createLicense(t, { customer_name: 'Ćevapdžinica Željo', customer_email: 'Kasa@Zeljo.example' });
    erp = await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Željo d.o.o.', customer_email: 'kasa@zeljo.example' });
    other = await createLicense(t, { customer_name: 'Someone Else', customer_email: 'else@zeljo.example' });
    await insertSeat(t, pos.id, { hostname: 'zeljo-till-01', machine_fingerprint: fingerprint('zeljo-1') });
    await insertSeat(t, erp.id, { hostname: 'zeljo-office', machine_fingerprint: fingerprint('zeljo-2') });
    await insertSeat(t, other.id, { hostname: 'elsewhere-till', machine_fingerprint: fingerprint('else-1') });
    const session = await loggedInAgent(t);
    agent = session.agent;
    token = await session.token();
  }, 60_000);
  afterAll(() => t.close());

  it("shows every licence of the address in any case, their machines and their activity, and nobody else's", async () => {
    const html = (await page('KASA@zeljo.EXAMPLE').expect(200)).text;
    expect(html).toContain(pos.license_key);
    expect(html).toContain(erp.license_key);
    expect(html).not.toContain(other.license_key);
    expect(html).toContain('zeljo-till-01');
    expect(html).toContain('zeljo-office');
    expect(html).not.toContain('elsewhere-till');
    expect(html.match(/data-testid="customer-machine"/g)).toHaveLength(2);
    // Both licences' creation entries are in the timeline, newest first.
    const rows = [...html.matchAll(/data-testid="audit-row"[\s\S]*?href="\/licenses\/(\d+)"/g)].map((m) => Number(m[1]));
    expect(rows).toEqual([erp.id, pos.id]);
    // Each entry names its own licence's customer, linked to this customer's page.
    const posRow = html.split('data-testid="audit-row"')[2];
    expect(posRow).toContain('Ćevapdžinica Željo</a>');
    expect(unescape(posRow)).toContain('href="/licenses/customer?email=KASA%40zeljo.EXAMPLE"');
    expect(unescape(html)).toContain(`/licenses/${pos.id}/confirm/release?machine_fingerprint=${fingerprint('zeljo-1')}`);
  });

  it('pages the activity timeline newest first, keeping the licence page', async () => {
    for (let i = 0; i < 21; i += 1) {
      await t.admin
        .put(`/api/v1/admin/licenses/${pos.id}`)
        .send({ notes: `call ${i}` })
        .expect(200);
    }
    const first = (await page('kasa@zeljo.example').expect(200)).text;
    expect(first.match(/data-testid="audit-row"/g)).toHaveLength(20);
    expect(unescape(first)).toContain('href="/licenses/customer?email=kasa%40zeljo.example&tpage=2"');
    const second = (await page('kasa@zeljo.example', '&tpage=2').expect(200)).text;
    expect(second.match(/data-testid="audit-row"/g)).toHaveLength(3);
    expect(second).toContain('21–23 of 23');
  });

  it('a PIB names a customer without an address; a bad PIB or a long address is a 400 page, a name alone a search', async () => {
    const withPib = await createLicense(t, { customer_name: 'Bez Adrese', customer_pib: '100000024' });
    const html = (await agent.get('/licenses/customer?pib=100000024').expect(200)).text;
    expect(html).toContain(withPib.license_key);
    await agent.get('/licenses/customer?pib=123').expect(400);
    await agent.get(`/licenses/customer?email=${'a'.repeat(250)}%40x.rs`).expect(400);
    await agent.get('/licenses/customer?name=Bez').expect(303).expect('Location', '/licenses?q=Bez');
    await agent.get('/licenses/customer?email=nobody%40nowhere.example').expect(200);
  });

  describe('notes', () => {
    it('adds a note (trimmed, escaped), audited with its text, shown newest first for any spelling of the address', async () => {
      await postForm(agent, token, '/licenses/customer/notes', { email: 'KASA@zeljo.example', note: '  Calls before noon <b>only</b>  ' })
        .expect(303)
        .expect('Location', '/licenses/customer?email=KASA%40zeljo.example#notes');
      await postForm(agent, token, '/licenses/customer/notes', { email: 'kasa@zeljo.example', note: 'Second note' }).expect(303);
      const html = (await page('kasa@ZELJO.example').expect(200)).text;
      const notes = [...html.matchAll(/data-testid="customer-note"><div class="note-body">([^<]*)</g)].map((m) => m[1]);
      expect(notes).toEqual(['Second note', 'Calls before noon &lt;b&gt;only&lt;/b&gt;']);
      const audit = await t.sql<{ actor: string; actor_type: string; details: { customer: string; note: string } }>(
        `SELECT actor, actor_type, details FROM audit_entries WHERE action = 'customer.note_added' ORDER BY id`,
      );
      expect(audit[0]).toMatchObject({ actor: 'staff:admin', actor_type: 'dashboard' });
      expect(audit[0].details).toEqual({ customer: 'email:kasa@zeljo.example', note: 'Calls before noon <b>only</b>' });
      // Staff notes are never webhook events.
      expect(await t.sql(`SELECT 1 FROM event_outbox WHERE type = 'customer.note_added'`)).toHaveLength(0);
      await t.admin
        .post('/api/v1/admin/webhooks')
        .send({ url: 'http://127.0.0.1:9/hook', events: ['customer.note_added'] })
        .expect(400);
    });

    it('refuses an empty note and one over 2000 characters with the form, the typed text kept, and stores nothing', async () => {
      const before = await t.sql(`SELECT id FROM customer_notes`);
      const empty = await postForm(agent, token, '/licenses/customer/notes', { email: 'kasa@zeljo.example', note: '   ' }).expect(400);
      expect(empty.text).toContain('Write the note before adding it');
      const long = await postForm(agent, token, '/licenses/customer/notes', { email: 'kasa@zeljo.example', note: 'ž'.repeat(2001) }).expect(
        400,
      );
      expect(long.text).toContain('A note has at most 2000 characters');
      expect(long.text).toContain('aria-invalid="true"');
      expect(long.text).toContain('ž'.repeat(2001));
      await postForm(agent, token, '/licenses/customer/notes', { email: 'kasa@zeljo.example', note: 'ž'.repeat(2000) }).expect(303);
      expect(await t.sql(`SELECT id FROM customer_notes`)).toHaveLength(before.length + 1);
    });

    it('refuses a note for a customer without licences (404), without a customer (404), and without the CSRF token (403)', async () => {
      await postForm(agent, token, '/licenses/customer/notes', { email: 'nobody@nowhere.example', note: 'x' }).expect(404);
      await postForm(agent, token, '/licenses/customer/notes', { note: 'x' }).expect(404);
      await postForm(agent, token, '/licenses/customer/notes', { pib: '123', note: 'x' }).expect(400);
      await agent.post('/licenses/customer/notes').type('form').send({ email: 'kasa@zeljo.example', note: 'forged' }).expect(403);
      expect(await t.sql(`SELECT 1 FROM customer_notes WHERE body = 'forged'`)).toHaveLength(0);
    });
  });

  it('every customer name links to the customer page: the list, the licence page and the audit log', async () => {
    const link = `href="/licenses/customer?email=kasa%40zeljo.example"`;
    expect(unescape((await agent.get('/licenses?q=zeljo').expect(200)).text)).toContain(link);
    expect(unescape((await agent.get(`/licenses/${pos.id}`).expect(200)).text)).toContain(
      'href="/licenses/customer?email=Kasa%40Zeljo.example"',
    );
    expect(unescape((await agent.get(`/audit?license=${erp.id}`).expect(200)).text)).toContain(link);
  });

  it("a search for a whole address that several licences carry opens the customer's page; part of one still lists", async () => {
    await agent
      .get('/licenses/search?q=KASA%40zeljo.example')
      .expect(303)
      .expect('Location', '/licenses/customer?email=KASA%40zeljo.example');
    await agent.get('/licenses/search?q=zeljo.example').expect(303).expect('Location', '/licenses?q=zeljo.example');
    await agent.get(`/licenses/search?q=else%40zeljo.example`).expect(303).expect('Location', `/licenses/${other.id}`);
  });

  /** Plays a credential limited to one product: the service puts the scope into every query it runs. */
  describe('a credential limited to one product', () => {
    it("never sees another product's licences, machines or activity on the customer's page", async () => {
      const posId = (await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'POS_RETAIL'`))[0].id;
      const customers = t.app.get(CustomersService);
      const paging = { licenses: { limit: 25, offset: 0 }, timeline: { limit: 100, offset: 0 } };
      const scoped = await customers.customerPage({ email: 'kasa@zeljo.example' }, paging, [posId]);
      expect(scoped.licenses.items.map((l) => l.id)).toEqual([pos.id]);
      expect(scoped.licenses.total).toBe(1);
      expect(scoped.machines.map((m) => m.hostname)).toEqual(['zeljo-till-01']);
      expect(scoped.timeline.items.length).toBeGreaterThan(0);
      expect(scoped.timeline.items.every((e) => e.license_id === pos.id)).toBe(true);
      // The whole audit of the ERP licence exists, and none of it leaks.
      expect((await t.app.get(AuditService).listEntries({ license_id: erp.id })).total).toBeGreaterThan(0);
      const none = await customers.customerPage({ email: 'kasa@zeljo.example' }, paging, []);
      expect(none.licenses.total).toBe(0);
      expect(none.machines).toEqual([]);
      expect(none.timeline.total).toBe(0);
    });

    it('a product-limited token reading the audit log never sees staff notes; an all-products key does', async () => {
      await postForm(agent, token, '/licenses/customer/notes', { email: 'kasa@zeljo.example', note: 'Secret of the shop' }).expect(303);
      const issued = await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: 'reseller-notes', scopes: ['audit:read', 'licenses:read'], products: ['POS_RETAIL'] })
        .expect(201);
      const limited = asBearer(t, issued.body.token as string);
      const seen = await limited.get('/api/v1/admin/audit?action=customer.note_added&limit=100').expect(200);
      expect(seen.body).toEqual([]);
      expect(JSON.stringify((await limited.get('/api/v1/admin/audit?limit=100').expect(200)).body)).not.toContain('Secret of the shop');
      const all = await t.admin.get('/api/v1/admin/audit?action=customer.note_added&limit=100').expect(200);
      expect(all.body.map((e: { details: { note: string } }) => e.details.note)).toContain('Secret of the shop');
    });

    it('cannot write a note about a customer who has no licence of its products', async () => {
      const posId = (await t.sql<{ id: number }>(`SELECT id FROM products WHERE code = 'POS_RETAIL'`))[0].id;
      const erpOnly = await createLicense(t, {
        product_code: 'ERP_SUITE',
        customer_name: 'ERP Only',
        customer_email: 'erp-only@example.rs',
      });
      const customers = t.app.get(CustomersService);
      const actor = { type: 'admin_api' as const, name: 'token:reseller', ip: null };
      await expect(customers.addNote({ email: 'erp-only@example.rs' }, 'hello', actor, [posId])).rejects.toMatchObject({ status: 404 });
      expect(erpOnly.id).toBeGreaterThan(0);
      expect(await t.sql(`SELECT 1 FROM customer_notes WHERE customer = 'email:erp-only@example.rs'`)).toHaveLength(0);
    });
  });
});
