import { KeyringService } from '../src/keyring/keyring.service';
import { verifySignature } from '../src/signing/license-signature';
import { Agent, csrfFrom, flashOf, openDashboard, postForm, unescape } from './dashboard-helpers';
import { createLicense, fingerprint, insertSeat } from './support/factories';
import type { TestApp } from './support/test-app';

const XSS = '<script>alert(1)</script>';
const ESCAPED_XSS = '&lt;script&gt;alert(1)&lt;/script&gt;';

describe('dashboard pages and actions', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;

  beforeAll(async () => {
    ({ t, agent, token } = await openDashboard());
  }, 60_000);
  afterAll(() => t.close());

  const count = async (table: string) => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
  const license = async (id: number) =>
    (
      await t.sql<Record<string, unknown> & { license_key: string; expires_at: Date | null }>('SELECT * FROM licenses WHERE id = $1', [id])
    )[0];
  const lastAudit = async (action: string) =>
    (await t.sql('SELECT * FROM audit_entries WHERE action = $1 ORDER BY id DESC LIMIT 1', [action]))[0];
  const flash = (url: string) => flashOf(agent, url);

  const validForm = {
    product_code: 'ERP_SUITE',
    license_type: 'QUARTERLY',
    customer_name: 'Kod Mike d.o.o.',
    customer_email: 'office@example.rs',
    customer_pib: '101134702',
    grace_days: '10',
    expires_on: '',
    notes: 'Ordered by phone',
    'features.ERP_SUITE': ['PAYROLL', 'INVENTORY'],
    'limit.ERP_SUITE.max_installations': '3',
    'limit.ERP_SUITE.max_operators': '',
    extra_limits: 'max_branches = 4',
    // Another product's group, as sent by a browser without JavaScript: ignored.
    'features.POS_RETAIL': ['REPORTS'],
  };

  describe('GET /dashboard', () => {
    it('shows statistics per product', async () => {
      await createLicense(t, { product_code: 'FISCAL_BRIDGE' });
      const res = await agent.get('/dashboard').expect(200);
      for (const name of ['Retail Point of Sale', 'ERP Suite', 'Fiscal Bridge']) expect(res.text).toContain(name);
      expect(res.text.match(/data-testid="product-stats"/g)).toHaveLength(3);
    });
  });

  describe('POST /licenses (new-licence form)', () => {
    it('shows the form with every active product, its features as checkboxes and the licence types', async () => {
      const res = await agent.get('/licenses/new').expect(200);
      expect(res.text).toContain('name="features.ERP_SUITE" value="ACCOUNTING" checked');
      expect(res.text).toContain('name="limit.POS_RETAIL.max_operators"');
      for (const type of ['TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY', 'PERPETUAL']) expect(res.text).toContain(`<option value="${type}"`);
      const preselected = await agent.get('/licenses/new?product=FISCAL_BRIDGE').expect(200);
      expect(preselected.text).toContain('<option value="FISCAL_BRIDGE" selected>');
    });

    it('creates a licence with the chosen features and limits, audited as the dashboard user', async () => {
      const res = await postForm(agent, token, '/licenses', validForm).expect(303);
      const id = Number(/^\/licenses\/(\d+)$/.exec(res.headers.location)?.[1]);
      const row = await license(id);
      expect(row).toMatchObject({
        license_type: 'QUARTERLY',
        customer_name: 'Kod Mike d.o.o.',
        customer_email: 'office@example.rs',
        customer_pib: '101134702',
        grace_days: 10,
        notes: 'Ordered by phone',
        features: ['PAYROLL', 'INVENTORY'],
        limits: { max_installations: 3, max_branches: 4 },
      });
      expect(row.license_key).toMatch(/^ERP-/);
      const audit = await lastAudit('license.created');
      expect(audit).toMatchObject({ actor_type: 'dashboard', actor: 'staff:admin', license_id: id, product_code: 'ERP_SUITE' });
      expect(await flash(res.headers.location)).toEqual(['success', `Licence ${row.license_key} created.`]);
    });

    it('takes seat-policy overrides (empty: the product default), shows them on the details page, and re-renders a bad one', async () => {
      const res = await postForm(agent, token, '/licenses', {
        ...validForm,
        policy_heartbeat_timeout_seconds: '600',
        policy_max_deactivations_per_30_days: '2',
        policy_license_file_ttl_days: '',
      }).expect(303);
      const id = Number(/^\/licenses\/(\d+)$/.exec(res.headers.location)?.[1]);
      expect((await license(id)).policy).toEqual({ heartbeat_timeout_seconds: 600, max_deactivations_per_30_days: 2 });
      const page = await agent.get(`/licenses/${id}`).expect(200);
      expect(page.text).toMatch(/floating: a seat dies after 600 s without a heartbeat/);
      expect(page.text).toMatch(/at most 2 client deactivations in 30 days/);
      expect(page.text).toMatch(/licence files valid 30 days/);

      const bad = await postForm(agent, token, '/licenses', { ...validForm, policy_heartbeat_timeout_seconds: '5' }).expect(400);
      expect(bad.text).toMatch(/Seat policy\.heartbeat_timeout_seconds must be null or an integer from 10 to 604800/);
      expect(bad.text).toContain('name="policy_heartbeat_timeout_seconds" value="5"');
    });

    it("shows a metered licence's uses this period and its past periods (docs/licences.md, Usage metering)", async () => {
      const lic = await createLicense(t, { policy: { max_uses: 50, uses_period: 'month' } });
      const fp = fingerprint('dashboard-usage');
      await t.http().post('/api/v1/activate').send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'h' }).expect(200);
      await t.http().post('/api/v1/usage').send({ license_key: lic.license_key, machine_fingerprint: fp, increment: 7 }).expect(200);
      await t.sql(
        `INSERT INTO usage_counters (license_id, period_start, uses)
         VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC' - interval '1 month') AT TIME ZONE 'UTC', 42)`,
        [lic.id],
      );
      const page = await agent.get(`/licenses/${lic.id}`).expect(200);
      expect(page.text).toMatch(/<meter min="0" max="50" value="7">/);
      expect(page.text).toMatch(/7 of 50 \(43 left/);
      expect(page.text).toMatch(/data-testid="usage-history"[\s\S]*value="42"/);
      // A licence that is not metered shows no meter.
      const plain = await createLicense(t);
      expect((await agent.get(`/licenses/${plain.id}`).expect(200)).text).not.toContain('data-testid="usage"');
    });

    it('takes an expiry date as the end of that day (UTC), and no features when none is checked', async () => {
      const year = new Date().getUTCFullYear() + 2;
      const { 'features.ERP_SUITE': _features, ...withoutFeatures } = validForm;
      const res = await postForm(agent, token, '/licenses', { ...withoutFeatures, expires_on: `${year}-03-31` }).expect(303);
      const row = await license(Number(res.headers.location.split('/').pop()));
      expect(row.expires_at?.toISOString()).toBe(`${year}-03-31T23:59:59.000Z`);
      expect(row.features).toEqual([]);
    });

    it.each([
      ['an empty customer name', { customer_name: '  ' }, 'Customer name must not be empty'],
      ['an invalid PIB', { customer_pib: '101134701' }, 'Customer PIB must be a valid PIB'],
      ['an invalid e-mail', { customer_email: 'nope' }, 'Customer e-mail must be an email address'],
      ['grace days out of range', { grace_days: '366' }, 'Grace days must not be greater than 365'],
      ['grace days that are not a number', { grace_days: 'seven' }, 'grace days must be a whole number'],
      ['a malformed date', { expires_on: '31.12.2030' }, 'the expiry date must look like 2027-01-31'],
      ['an expiry in the past', { expires_on: '2020-01-01' }, 'The expiry date must be in the future'],
      ['a bad limit value', { 'limit.ERP_SUITE.max_installations': '-1' }, 'max_installations must be a whole number'],
      ['a malformed extra limit', { extra_limits: 'max_branches four' }, 'other limits, line 1'],
      ['a bad limit name', { extra_limits: 'Max-Branches = 4' }, 'must match'],
      ['an unknown licence type', { license_type: 'WEEKLY' }, 'Licence type must be one of the following values'],
      ['an unknown product', { product_code: 'NO_SUCH' }, 'product_code'],
      ['a feature of another product', { 'features.ERP_SUITE': ['PAYROLL', 'REPORTS'] }, 'Features not offered by ERP_SUITE: REPORTS'],
      ['notes too long', { notes: 'x'.repeat(2001) }, 'Notes must be shorter than or equal to 2000 characters'],
    ])('re-renders the form for %s with the message and the typed values; nothing is created', async (_case, change, message) => {
      const before = await count('licenses');
      const res = await postForm(agent, token, '/licenses', { ...validForm, customer_name: `Typed ${XSS}`, ...change }).expect(400);
      expect(res.text).toContain('The licence was not created');
      expect(res.text).toContain(message);
      if (!('customer_name' in change)) expect(res.text).toContain(`value="Typed ${ESCAPED_XSS}"`);
      const typedPib = (change as Record<string, string>).customer_pib ?? validForm.customer_pib;
      expect(res.text).toContain(`value="${typedPib}"`);
      expect(res.text).not.toContain(XSS);
      expect(await count('licenses')).toBe(before);
    });

    it('keeps the unchecked features unchecked when the form comes back', async () => {
      const res = await postForm(agent, token, '/licenses', { ...validForm, customer_email: 'bad' }).expect(400);
      expect(res.text).toContain('name="features.ERP_SUITE" value="PAYROLL" checked');
      expect(res.text).toContain('name="features.ERP_SUITE" value="ACCOUNTING">');
      expect(res.text).toContain('name="limit.ERP_SUITE.max_installations" value="3"');
      expect(unescape(res.text)).toContain('max_branches = 4</textarea>');
    });

    it('refuses the form without the CSRF token: 403 and no licence', async () => {
      const before = await count('licenses');
      await agent.post('/licenses').type('form').send(validForm).expect(403);
      await agent
        .post('/licenses')
        .type('form')
        .send({ ...validForm, _csrf: 'forged' })
        .expect(403);
      expect(await count('licenses')).toBe(before);
    });
  });

  describe('GET /licenses', () => {
    it('filters by product, status, type and search text, with status badges', async () => {
      const a = await createLicense(t, { product_code: 'FISCAL_BRIDGE', license_type: 'PERPETUAL', customer_name: 'Filter Target Alpha' });
      await createLicense(t, { product_code: 'FISCAL_BRIDGE', license_type: 'TRIAL', customer_name: 'Filter Target Beta' });
      await t.admin.post(`/api/v1/admin/licenses/${a.id}/revoke`).send({ reason: 'test' }).expect(200);
      const rowsOf = (html: string) => html.match(/data-testid="license-row"/g)?.length ?? 0;

      const byName = await agent.get('/licenses?q=filter%20target').expect(200);
      expect(rowsOf(byName.text)).toBe(2);
      const revoked = await agent.get('/licenses?q=filter%20target&status=revoked').expect(200);
      expect(rowsOf(revoked.text)).toBe(1);
      expect(revoked.text).toContain('<span class="badge badge-revoked">revoked</span>');
      expect(revoked.text).toContain('<option value="revoked" selected>');
      expect(rowsOf((await agent.get('/licenses?q=filter%20target&license_type=TRIAL').expect(200)).text)).toBe(1);
      expect(rowsOf((await agent.get('/licenses?q=filter%20target&product=POS_RETAIL').expect(200)).text)).toBe(0);
      expect(rowsOf((await agent.get(`/licenses?q=${a.license_key.toLowerCase()}`).expect(200)).text)).toBe(1);
    });

    it('pages through the list keeping the filters in the links', async () => {
      for (let i = 0; i < 27; i++) await createLicense(t, { customer_name: `Paged Customer ${i}` });
      const first = await agent.get('/licenses?q=Paged%20Customer').expect(200);
      expect(first.text.match(/data-testid="license-row"/g)).toHaveLength(25);
      expect(first.text).toContain('1–25 of 27');
      expect(unescape(first.text)).toContain('href="/licenses?q=Paged+Customer&page=2"');
      const second = await agent.get('/licenses?q=Paged+Customer&page=2').expect(200);
      expect(second.text.match(/data-testid="license-row"/g)).toHaveLength(2);
      expect(unescape(second.text)).toContain('href="/licenses?q=Paged+Customer&page=1"');
      expect((await agent.get('/licenses?q=Paged+Customer&page=99').expect(200)).text).not.toContain('data-testid="license-row"');
      await agent.get('/licenses?page=-1').expect(200);
    });

    it('ignores invalid filters with a message instead of failing', async () => {
      const res = await agent.get('/licenses?status=bogus&license_type=WEEKLY&q=%00').expect(200);
      expect(res.text).toContain('Ignored a filter');
      await agent.get('/licenses?product=' + 'X'.repeat(500)).expect(200);
      await agent.get('/licenses?q=a&q=b').expect(200);
    });
  });

  describe('GET /licenses/{id}', () => {
    it('answers 404 pages for unknown and malformed ids', async () => {
      for (const path of ['/licenses/999999', '/licenses/0', '/licenses/abc', '/licenses/99999999999', '/licenses/1.5']) {
        const res = await agent.get(path).expect(404);
        expect(res.headers['content-type']).toMatch(/text\/html/);
        expect(res.text).toContain('404 · Not found');
      }
      for (const path of ['/licenses/1/nothing', '/dashboard/x', '/audit/1'])
        expect((await agent.get(path).expect(404)).text).toContain('404 · Not found');
      await postForm(agent, token, '/licenses/999999/revoke', { reason: 'x' }).expect(404);
      await postForm(agent, token, '/licenses/1/delete').expect(404);
      await postForm(agent, token, '/licenses/abc/release').expect(404);
    });

    it('shows every field, the seats, history, the licence audit entries and a signed payload preview', async () => {
      const created = await createLicense(t, {
        product_code: 'POS_RETAIL',
        customer_email: 'a@example.rs',
        notes: 'Some notes',
        limits: { max_installations: 2 },
      });
      const seat = await insertSeat(t, created.id, { hostname: 'till-01', os: 'Windows 11', app_version: '4.2.0', ip: '203.0.113.7' });
      await insertSeat(t, created.id, { hostname: 'old-till', released_at: new Date(), release_reason: 'deactivated' });
      const res = await agent.get(`/licenses/${created.id}`).expect(200);
      for (const text of [
        created.license_key,
        'a@example.rs',
        'Some notes',
        'till-01',
        'old-till',
        seat.machine_fingerprint,
        'Windows 11',
        'license.created',
        'Machines bound now (1 of 2)',
      ]) {
        expect(res.text).toContain(text);
      }
      const preview = JSON.parse(unescape(/<pre data-testid="payload-preview"[^>]*>([\s\S]*?)<\/pre>/.exec(res.text)![1]));
      expect(preview.license).toMatchObject({
        license_key: created.license_key,
        machine_fingerprint: seat.machine_fingerprint,
        product: 'POS_RETAIL',
      });
      expect(verifySignature(preview.license, preview.signature, t.app.get(KeyringService).activeKey().publicKeyPem)).toBe(true);
    });
  });

  describe('POST /licenses/{id}/revoke', () => {
    it('needs a reason, then revokes once, audited as the dashboard user', async () => {
      const { id } = await createLicense(t);
      await postForm(agent, token, `/licenses/${id}/revoke`, { reason: '   ' }).expect(303).expect('Location', `/licenses/${id}`);
      expect((await license(id)).revoked).toBe(false);
      expect(await flash(`/licenses/${id}`)).toEqual(['error', 'reason must not be empty']);

      await postForm(agent, token, `/licenses/${id}/revoke`, { reason: 'Customer stopped paying' }).expect(303);
      expect(await license(id)).toMatchObject({ revoked: true, revoke_reason: 'Customer stopped paying' });
      expect(await lastAudit('license.revoked')).toMatchObject({
        license_id: id,
        actor_type: 'dashboard',
        actor: 'staff:admin',
        details: { reason: 'Customer stopped paying' },
      });
      expect(await flash(`/licenses/${id}`)).toEqual(['success', 'Licence revoked.']);

      await postForm(agent, token, `/licenses/${id}/revoke`, { reason: 'again' }).expect(303);
      expect(await flash(`/licenses/${id}`)).toEqual(['error', 'The licence is already revoked']);
      expect((await license(id)).revoke_reason).toBe('Customer stopped paying');
    });

    it('refuses a revoke without the CSRF token: 403, still not revoked', async () => {
      const { id } = await createLicense(t);
      await agent.post(`/licenses/${id}/revoke`).type('form').send({ reason: 'no token' }).expect(403);
      expect((await license(id)).revoked).toBe(false);
    });
  });

  describe('POST /licenses/{id}/release', () => {
    it('releases one machine, then all, audited; nothing bound is an error message', async () => {
      const { id } = await createLicense(t, { limits: { max_installations: 3 } });
      await insertSeat(t, id, { hostname: 'pc-1' });
      const two = await insertSeat(t, id, { hostname: 'pc-2' });
      await insertSeat(t, id, { hostname: 'pc-3' });
      const seats = async () =>
        t.sql('SELECT machine_fingerprint, released_at, release_reason FROM activations WHERE license_id = $1 ORDER BY id', [id]);

      // Upper-case hex is accepted, as in the API.
      await postForm(agent, token, `/licenses/${id}/release`, {
        machine_fingerprint: two.machine_fingerprint.toUpperCase().replace('SHA256', 'sha256'),
      }).expect(303);
      expect((await seats()).map((s) => s.release_reason)).toEqual([null, 'force_released', null]);
      expect(await lastAudit('license.released')).toMatchObject({ license_id: id, actor_type: 'dashboard', actor: 'staff:admin' });
      expect(await flash(`/licenses/${id}`)).toEqual(['success', '1 seat released.']);

      await postForm(agent, token, `/licenses/${id}/release`, { machine_fingerprint: 'sha256:bogus' }).expect(303);
      expect((await flash(`/licenses/${id}`))?.[0]).toBe('error');
      await postForm(agent, token, `/licenses/${id}/release`, { machine_fingerprint: fingerprint('not bound') }).expect(303);
      expect(await flash(`/licenses/${id}`)).toEqual(['error', 'That machine holds no seat of this licence']);

      await postForm(agent, token, `/licenses/${id}/release`).expect(303);
      expect((await seats()).every((s) => s.released_at !== null)).toBe(true);
      expect(await flash(`/licenses/${id}`)).toEqual(['success', '2 seats released.']);

      await postForm(agent, token, `/licenses/${id}/release`).expect(303);
      expect(await flash(`/licenses/${id}`)).toEqual(['error', 'The licence is not activated on any machine']);
    });

    it('refuses a release without the CSRF token: 403, the seat stays bound', async () => {
      const { id } = await createLicense(t);
      await insertSeat(t, id);
      await agent.post(`/licenses/${id}/release`).type('form').send({}).expect(403);
      expect((await t.sql('SELECT released_at FROM activations WHERE license_id = $1', [id]))[0].released_at).toBeNull();
    });
  });

  describe('suspend and reinstate', () => {
    it('suspends and reinstates through SuspendLicense; a revoked licence can be neither (the bulk rule: one use case)', async () => {
      const { id } = await createLicense(t);
      await postForm(agent, token, `/licenses/${id}/suspend`).expect(303);
      expect((await license(id)).active).toBe(false);
      expect((await agent.get(`/licenses/${id}`)).text).toContain('badge-suspended');
      expect(await lastAudit('license.updated')).toMatchObject({
        license_id: id,
        actor_type: 'dashboard',
        details: { changes: { active: { from: true, to: false } } },
      });
      await postForm(agent, token, `/licenses/${id}/reinstate`).expect(303);
      expect((await license(id)).active).toBe(true);
      await t.admin.post(`/api/v1/admin/licenses/${id}/revoke`).send({ reason: 'gone' }).expect(200);
      const entries = (await t.sql(`SELECT 1 FROM audit_entries WHERE license_id = $1`, [id])).length;
      await postForm(agent, token, `/licenses/${id}/suspend`).expect(303);
      expect(await flash(`/licenses/${id}`)).toEqual(['error', 'A revoked licence cannot be suspended']);
      await postForm(agent, token, `/licenses/${id}/reinstate`).expect(303);
      expect(await flash(`/licenses/${id}`)).toEqual(['error', 'A revoked licence cannot be made active again']);
      expect(await license(id)).toMatchObject({ revoked: true, active: true });
      expect((await t.sql(`SELECT 1 FROM audit_entries WHERE license_id = $1`, [id])).length).toBe(entries);
    });
  });

  describe('HTML escaping', () => {
    it('escapes a customer name with a script tag on the list, the details and the audit pages', async () => {
      const { id } = await createLicense(t, {
        customer_name: XSS,
        notes: `"><img src=x onerror=alert(1)>`,
        customer_email: 'xss@example.rs',
      });
      for (const path of ['/licenses?q=script', `/licenses/${id}`, `/audit?license_id=${id}`, '/dashboard']) {
        const res = await agent.get(path).expect(200);
        expect(res.text).not.toContain(XSS);
        expect(res.text).not.toContain('<img src=x');
        if (path !== '/dashboard') expect(res.text).toContain(ESCAPED_XSS);
      }
    });
  });

  describe('GET /audit', () => {
    it('filters by action, actor type, licence and dates, and pages', async () => {
      const { id } = await createLicense(t);
      await postForm(agent, token, `/licenses/${id}/revoke`, { reason: 'audit filter test' }).expect(303);
      const rowsOf = (html: string) => html.match(/data-testid="audit-row"/g)?.length ?? 0;
      const byLicence = await agent.get(`/audit?license_id=${id}`).expect(200);
      expect(rowsOf(byLicence.text)).toBe(2); // created through the API, revoked through the dashboard
      expect(rowsOf((await agent.get(`/audit?license_id=${id}&actor_type=dashboard`).expect(200)).text)).toBe(1);
      expect(rowsOf((await agent.get(`/audit?license_id=${id}&action=license.created`).expect(200)).text)).toBe(1);
      const today = new Date().toISOString().slice(0, 10);
      expect(rowsOf((await agent.get(`/audit?license_id=${id}&from=${today}&to=${today}`).expect(200)).text)).toBe(2);
      expect(rowsOf((await agent.get(`/audit?license_id=${id}&to=2000-01-01`).expect(200)).text)).toBe(0);
      while ((await count('audit_entries')) <= 50) await createLicense(t);
      const all = await agent.get('/audit').expect(200);
      expect(rowsOf(all.text)).toBe(50);
      expect(unescape(all.text)).toContain('href="/audit?page=2"');
    });

    it('filters by product and by any actor exactly; an unknown product or actor shows nothing', async () => {
      const rowsOf = (html: string) => html.match(/data-testid="audit-row"/g)?.length ?? 0;
      const erp = await createLicense(t, { product_code: 'ERP_SUITE' });
      await postForm(agent, token, `/licenses/${erp.id}/revoke`, { reason: 'product filter page' }).expect(303);
      const byProduct = (await agent.get(`/audit?product=ERP_SUITE&license_id=${erp.id}`).expect(200)).text;
      expect(rowsOf(byProduct)).toBe(2);
      expect(byProduct).toMatch(/<option value="ERP_SUITE" selected>/);
      expect(rowsOf((await agent.get(`/audit?product=POS_RETAIL&license_id=${erp.id}`).expect(200)).text)).toBe(0);
      const unknown = (await agent.get('/audit?product=NO_SUCH_PRODUCT').expect(200)).text;
      expect(rowsOf(unknown)).toBe(0);
      expect(unknown).not.toContain('Ignored a filter');
      expect(unescape(unknown)).toContain('No product you can see has the code “NO_SUCH_PRODUCT”, so no entry matches.');
      await t.sql(
        `INSERT INTO audit_entries (action, actor_type, actor, license_id, product_code, details)
         VALUES ('license.deactivated', 'customer', 'buyer@audit-actor.example', $1, 'ERP_SUITE', '{}')`,
        [erp.id],
      );
      for (const [actor, n] of [
        ['buyer@audit-actor.example', 1],
        ['staff:admin', 1],
        ['buyer@audit-actor', 0],
      ] as const) {
        const page = (await agent.get(`/audit?${new URLSearchParams({ actor, license_id: String(erp.id) }).toString()}`).expect(200)).text;
        expect([actor, rowsOf(page)]).toEqual([actor, n]);
        expect(unescape(page)).toContain(`value="${actor}"`);
      }
      // The staff field and the actor field together: both must hold.
      expect(rowsOf((await agent.get(`/audit?staff=admin&actor=staff:admin&license_id=${erp.id}`).expect(200)).text)).toBe(1);
      expect(rowsOf((await agent.get(`/audit?staff=admin&actor=key:nobody&license_id=${erp.id}`).expect(200)).text)).toBe(0);
      // The export takes the same filters.
      const csv = (await agent.get(`/audit/export.csv?product=ERP_SUITE&actor=staff:admin&license_id=${erp.id}`).expect(200)).text;
      expect(csv.trim().split('\n')).toHaveLength(2);
      expect(csv).toContain('license.revoked');
    });

    it('says what is wrong with a date in plain words, and an actor or product too long or with control characters', async () => {
      const flash = async (query: string) => {
        const html = (await agent.get(`/audit?${query}`).expect(200)).text;
        return unescape(/role="alert">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '');
      };
      const bad = await flash('from=31.01.2026');
      expect(bad).toContain('the “From” day “31.01.2026” is not a date');
      expect(bad).toContain('2026-01-31');
      expect(bad).not.toMatch(/ISO 8601|timestamp|zone/);
      expect(await flash('to=2026-02-30')).toContain('the “To” day “2026-02-30” is not a date');
      const reversed = await flash('from=2030-01-02&to=2030-01-01');
      expect(reversed).toContain('the “From” day (2030-01-02) is after the “To” day (2030-01-01)');
      expect(reversed).not.toContain('from must not be after to');
      expect(await flash(`actor=${'a'.repeat(321)}`)).toContain('the actor must be at most 320 characters on one line');
      expect(await flash('actor=staff%3Aadmin%0Ax')).toContain('the actor must be at most 320 characters on one line');
      expect(await flash(`product=${'P'.repeat(33)}`)).toContain('the product must be a product code');
    });

    it('ignores invalid filters with a message', async () => {
      for (const query of ['action=nope', 'actor_type=root', 'license_id=abc', 'from=yesterday', 'from=2030-01-02&to=2030-01-01']) {
        const res = await agent.get(`/audit?${query}`).expect(200);
        expect(res.text).toContain('Ignored a filter');
      }
    });
  });

  describe('database outage', () => {
    it('renders a 503 page while PostgreSQL is unreachable and recovers', async () => {
      await t.cutDatabase();
      try {
        const res = await agent.get('/dashboard');
        expect(res.status).toBe(503);
        expect(res.headers['content-type']).toMatch(/text\/html/);
        expect(res.text).toContain('503 · Service unavailable');
      } finally {
        await t.restoreDatabase();
      }
      await agent.get('/dashboard').expect(200);
    });
  });

  it('uses the same token for every form of the session', async () => {
    expect(csrfFrom((await agent.get('/audit')).text)).toBe(token);
  });
});
