import { computeExpiresAt } from '../src/licenses/license-expiry';
import { Agent, flashOf, openDashboard, postForm, unescape } from './dashboard-helpers';
import { createLicense, fingerprint, insertSeat, setLicenseExpiry } from './support/factories';
import type { TestApp } from './support/test-app';

// Under load (2 cores shared by several suites) building the app and logging in can take longer than Jest's 5 s.
jest.setTimeout(60_000);

/** Server-side rules of the staff dashboard (issue 22): edit, renew, confirmations with reasons, search, audit filters, lists. */
describe('dashboard staff tasks', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;

  beforeAll(async () => {
    ({ t, agent, token } = await openDashboard());
  }, 60_000);
  afterAll(() => t.close());

  const license = async (id: number) => (await t.sql('SELECT * FROM licenses WHERE id = $1', [id]))[0];
  const lastAudit = async (id: number, action: string) =>
    (await t.sql('SELECT * FROM audit_entries WHERE license_id = $1 AND action = $2 ORDER BY id DESC LIMIT 1', [id, action]))[0];
  const flash = (url: string) => flashOf(agent, url);
  const rowKeys = (html: string) => [...html.matchAll(/<a class="mono" href="\/licenses\/\d+"[^>]*>([^<]+)<\/a>/g)].map((m) => m[1]);
  const search = async (q: string) => rowKeys((await agent.get(`/licenses?${new URLSearchParams({ q }).toString()}`).expect(200)).text);

  const editForm = (overrides: Record<string, string | string[]> = {}) => ({
    license_type: 'YEARLY',
    customer_name: 'Edited d.o.o.',
    customer_email: 'edited@example.rs',
    customer_pib: '101134702',
    grace_days: '10',
    expires_on: '2031-05-31',
    notes: 'Edited in the dashboard',
    'features.POS_RETAIL': ['REPORTS'],
    'limit.POS_RETAIL.max_installations': '3',
    extra_limits: 'max_branches = 2',
    active: 'on',
    ...overrides,
  });

  describe('edit', () => {
    it('shows the form with the current values and saves every field PUT allows, audited with old and new values', async () => {
      const { id } = await createLicense(t, { customer_name: 'Before Edit', limits: { max_installations: 2 } });
      const page = await agent.get(`/licenses/${id}/edit`).expect(200);
      expect(page.text).toContain('value="Before Edit"');
      expect(page.text).toContain('name="limit.POS_RETAIL.max_installations" value="2"');
      await postForm(agent, token, `/licenses/${id}/edit`, editForm()).expect(303).expect('Location', `/licenses/${id}`);
      const row = await license(id);
      expect(row).toMatchObject({
        customer_name: 'Edited d.o.o.',
        customer_email: 'edited@example.rs',
        customer_pib: '101134702',
        grace_days: 10,
        notes: 'Edited in the dashboard',
        features: ['REPORTS'],
        limits: { max_installations: 3, max_branches: 2 },
        active: true,
      });
      expect(new Date(row.expires_at).toISOString()).toBe('2031-05-31T23:59:59.000Z');
      const audit = await lastAudit(id, 'license.updated');
      expect(audit).toMatchObject({ actor_type: 'dashboard', actor: 'staff:admin' });
      expect(audit.details.changes.customer_name).toEqual({ from: 'Before Edit', to: 'Edited d.o.o.' });
      expect(await flash(`/licenses/${id}`)).toEqual(['success', 'Licence saved.']);
    });

    it('keeps the exact expiry when the date is left as it was, and clears emptied optional fields', async () => {
      const { id } = await createLicense(t, { customer_email: 'keep@example.rs', notes: 'old' });
      const before = new Date((await license(id)).expires_at).toISOString();
      await postForm(
        agent,
        token,
        `/licenses/${id}/edit`,
        editForm({ expires_on: before.slice(0, 10), customer_email: '', notes: '' }),
      ).expect(303);
      const row = await license(id);
      expect(new Date(row.expires_at).toISOString()).toBe(before);
      expect(row).toMatchObject({ customer_email: null, notes: null });
    });

    it('reports every error in one pass, with the creation messages and the typed values; nothing changes', async () => {
      const { id } = await createLicense(t, { customer_name: 'Unchanged' });
      const res = await postForm(
        agent,
        token,
        `/licenses/${id}/edit`,
        editForm({
          customer_name: ' ',
          customer_email: 'not-an-email',
          customer_pib: '101134701',
          grace_days: 'seven',
          'features.POS_RETAIL': ['REPORTS', 'NOT_A_FEATURE'],
          extra_limits: 'max_branches four',
        }),
      ).expect(400);
      for (const message of [
        'Customer name must not be empty',
        'Customer e-mail must be an email address',
        'Customer PIB must be a valid PIB',
        'grace days must be a whole number',
        'Features not offered by POS_RETAIL: NOT_A_FEATURE',
        'other limits, line 1',
      ]) {
        expect(res.text).toContain(message);
      }
      expect(res.text).toContain('data-error-summary');
      expect(res.text).toContain('href="#field-customer_email"');
      expect(res.text).toMatch(
        /id="field-customer_pib"[^>]*aria-describedby="field-customer_pib-hint field-customer_pib-error"[^>]*aria-invalid="true"/,
      );
      expect(res.text).toContain('value="not-an-email"');
      expect((await license(id)).customer_name).toBe('Unchanged');
    });

    it('words the PERPETUAL rule for the form, and allows a past expiry (ending the licence early)', async () => {
      const { id } = await createLicense(t);
      const res = await postForm(agent, token, `/licenses/${id}/edit`, editForm({ license_type: 'PERPETUAL' })).expect(400);
      expect(res.text).toContain('A PERPETUAL licence never expires: leave the expiry date empty');
      expect(res.text).not.toContain('omit expires_at');
      const needsDate = await postForm(agent, token, `/licenses/${id}/edit`, editForm({ expires_on: '' })).expect(400);
      expect(needsDate.text).toContain('A YEARLY licence needs an expiry date');
      await postForm(agent, token, `/licenses/${id}/edit`, editForm({ license_type: 'PERPETUAL', expires_on: '' })).expect(303);
      expect((await license(id)).expires_at).toBeNull();
      await postForm(agent, token, `/licenses/${id}/edit`, editForm({ expires_on: '2020-01-01' })).expect(303);
      expect(new Date((await license(id)).expires_at).toISOString()).toBe('2020-01-01T23:59:59.000Z');
      const created = await postForm(agent, token, '/licenses', {
        product_code: 'POS_RETAIL',
        license_type: 'PERPETUAL',
        customer_name: 'x',
        expires_on: '2031-01-01',
      }).expect(400);
      expect(created.text).toContain('A PERPETUAL licence never expires: leave the expiry date empty');
    });

    it('suspends through the Active box, and cannot make a revoked licence active', async () => {
      const { id } = await createLicense(t);
      const { active: _active, ...withoutActive } = editForm();
      await postForm(agent, token, `/licenses/${id}/edit`, withoutActive).expect(303);
      expect((await license(id)).active).toBe(false);
      await t.admin.post(`/api/v1/admin/licenses/${id}/revoke`).send({ reason: 'gone' }).expect(200);
      const res = await postForm(agent, token, `/licenses/${id}/edit`, editForm()).expect(400);
      expect(res.text).toContain('A revoked licence cannot be made active again');
    });

    it('answers 404 for an unknown licence', async () => {
      await agent.get('/licenses/999999/edit').expect(404);
      await postForm(agent, token, '/licenses/999999/edit', editForm()).expect(404);
    });
  });

  describe('renew', () => {
    const renew = (id: number) => postForm(agent, token, `/licenses/${id}/renew`).expect(303).expect('Location', `/licenses/${id}`);

    it('extends a running licence by one term from its current expiry', async () => {
      const { id } = await createLicense(t, { license_type: 'YEARLY', expires_at: '2030-01-31T12:00:00Z' });
      await renew(id);
      expect(new Date((await license(id)).expires_at).toISOString()).toBe('2031-01-31T12:00:00.000Z');
      const audit = await lastAudit(id, 'license.updated');
      expect(audit.details).toEqual({
        changes: { expires_at: { from: '2030-01-31T12:00:00.000Z', to: '2031-01-31T12:00:00.000Z' } },
        renewed: true,
      });
      expect(await flash(`/licenses/${id}`)).toEqual(['success', 'Licence renewed until 2031-01-31.']);
    });

    it('counts from now for an expired licence, by calendar months for MONTHLY and QUARTERLY, 14 days for TRIAL', async () => {
      for (const type of ['MONTHLY', 'QUARTERLY', 'TRIAL'] as const) {
        const { id } = await createLicense(t, { license_type: type });
        await setLicenseExpiry(t, id, new Date('2020-03-15T00:00:00Z'));
        const before = new Date();
        await renew(id);
        const after = new Date();
        const renewed = new Date((await license(id)).expires_at).getTime();
        expect(renewed).toBeGreaterThanOrEqual((computeExpiresAt(type, before) as Date).getTime());
        expect(renewed).toBeLessThanOrEqual((computeExpiresAt(type, after) as Date).getTime());
      }
    });

    it('refuses PERPETUAL and revoked licences with a message', async () => {
      const perpetual = await createLicense(t, { license_type: 'PERPETUAL' });
      await renew(perpetual.id);
      expect(await flash(`/licenses/${perpetual.id}`)).toEqual(['error', 'A PERPETUAL licence never expires: there is nothing to renew']);
      expect((await license(perpetual.id)).expires_at).toBeNull();
      const revoked = await createLicense(t);
      await t.admin.post(`/api/v1/admin/licenses/${revoked.id}/revoke`).send({ reason: 'gone' }).expect(200);
      await renew(revoked.id);
      expect(await flash(`/licenses/${revoked.id}`)).toEqual(['error', 'A revoked licence cannot be renewed']);
    });
  });

  describe('confirmation steps and reasons', () => {
    it('asks before each destructive action, and stores the typed reason in the audit entry', async () => {
      const { id } = await createLicense(t, { limits: { max_installations: 3 } });
      const one = await insertSeat(t, id, { hostname: 'till-1' });
      await insertSeat(t, id, { hostname: 'till-2' });

      const releasePage = await agent.get(`/licenses/${id}/confirm/release?machine_fingerprint=${one.machine_fingerprint}`).expect(200);
      expect(releasePage.text).toContain('Release this machine');
      expect(releasePage.text).toContain('till-1');
      await postForm(agent, token, `/licenses/${id}/release`, {
        machine_fingerprint: one.machine_fingerprint,
        reason: 'Till stolen',
      }).expect(303);
      expect((await lastAudit(id, 'license.released')).details).toMatchObject({ released: 1, reason: 'Till stolen' });

      expect((await agent.get(`/licenses/${id}/confirm/release-all`).expect(200)).text).toContain('Release all machines');
      await postForm(agent, token, `/licenses/${id}/release`, { reason: 'Shop moved' }).expect(303);
      expect((await lastAudit(id, 'license.released')).details).toMatchObject({ released: 1, reason: 'Shop moved' });

      expect((await agent.get(`/licenses/${id}/confirm/suspend`).expect(200)).text).toContain('Suspend the licence');
      await postForm(agent, token, `/licenses/${id}/suspend`, { reason: 'Invoice unpaid' }).expect(303);
      expect((await lastAudit(id, 'license.updated')).details).toEqual({
        changes: { active: { from: true, to: false } },
        reason: 'Invoice unpaid',
      });

      const revokePage = await agent.get(`/licenses/${id}/confirm/revoke`).expect(200);
      expect(revokePage.text).toMatch(/<textarea id="field-reason" name="reason"[^>]* required/);
      await postForm(agent, token, `/licenses/${id}/revoke`, { reason: 'Contract ended' }).expect(303);
      expect((await lastAudit(id, 'license.revoked')).details).toEqual({ reason: 'Contract ended' });
    });

    it('keeps the reason optional for release and suspend, and bounds it', async () => {
      const { id } = await createLicense(t);
      await insertSeat(t, id);
      await postForm(agent, token, `/licenses/${id}/release`).expect(303);
      expect((await lastAudit(id, 'license.released')).details.reason).toBeNull();
      await postForm(agent, token, `/licenses/${id}/suspend`, { reason: 'x'.repeat(501) }).expect(303);
      expect((await flash(`/licenses/${id}`))?.[0]).toBe('error');
      expect((await license(id)).active).toBe(true);
      await postForm(agent, token, `/licenses/${id}/suspend`).expect(303);
      expect((await lastAudit(id, 'license.updated')).details).toEqual({ changes: { active: { from: true, to: false } } });
    });

    it('answers 404 for an unknown action or a machine without a seat', async () => {
      const { id } = await createLicense(t);
      await agent.get(`/licenses/${id}/confirm/delete`).expect(404);
      await agent.get(`/licenses/${id}/confirm/release?machine_fingerprint=${fingerprint('none')}`).expect(404);
      await agent.get(`/licenses/999999/confirm/revoke`).expect(404);
    });
  });

  describe('search', () => {
    let muller: { id: number; license_key: string };
    let other: { id: number; license_key: string };
    let seatFingerprint: string;

    beforeAll(async () => {
      muller = await createLicense(t, {
        customer_name: 'Ђорђе Müller Šećerana',
        customer_email: 'Office@Muller-Example.rs',
        customer_pib: '100000024',
      });
      other = await createLicense(t, { customer_name: 'Unrelated 100% Shop_1' });
      seatFingerprint = (await insertSeat(t, muller.id, { hostname: 'KASA-Novi-Sad-07' })).machine_fingerprint;
    }, 60_000);

    it('finds a customer by name or e-mail regardless of accents and case', async () => {
      expect(await search('muller')).toEqual([muller.license_key]);
      expect(await search('MÜLLER')).toEqual([muller.license_key]);
      expect(await search('secerana')).toEqual([muller.license_key]);
      expect(await search('ђорђе')).toEqual([muller.license_key]);
      expect(await search('office@muller-example')).toEqual([muller.license_key]);
    });

    it('finds a key with or without dashes, in any case', async () => {
      expect(await search(muller.license_key)).toEqual([muller.license_key]);
      expect(await search(muller.license_key.toLowerCase())).toEqual([muller.license_key]);
      expect(await search(muller.license_key.replace(/-/g, ''))).toEqual([muller.license_key]);
      expect(await search(muller.license_key.split('-').slice(1, 3).join(''))).toEqual([muller.license_key]);
    });

    it('finds the PIB, a hostname and a fingerprint prefix (with or without sha256:)', async () => {
      expect(await search('100000024')).toEqual([muller.license_key]);
      expect(await search('novi-sad')).toEqual([muller.license_key]);
      expect(await search(seatFingerprint.slice(0, 15))).toEqual([muller.license_key]);
      expect(await search(seatFingerprint.slice(7, 17).toUpperCase())).toEqual([muller.license_key]);
      expect(await search('zzzz-no-such-thing')).toEqual([]);
    });

    it('treats % and _ literally', async () => {
      expect(await search('100%')).toEqual([other.license_key]);
      expect(await search('shop_1')).toEqual([other.license_key]);
      expect(await search('%')).toEqual([other.license_key]);
    });

    it("extends the admin API's q compatibly: still a literal substring, now accent-insensitive and with the dashless key and PIB", async () => {
      const q = async (text: string) =>
        (
          (await t.admin.get(`/api/v1/admin/licenses?${new URLSearchParams({ q: text }).toString()}`).expect(200)).body as { id: number }[]
        ).map((l) => l.id);
      expect(await q('muller')).toEqual([muller.id]);
      expect(await q(muller.license_key.replace(/-/g, '').toLowerCase())).toEqual([muller.id]);
      expect(await q('100000024')).toEqual([muller.id]);
      expect(await q('100%')).toEqual([other.id]);
      // Machines are the dashboard's search only.
      expect(await q('novi-sad')).toEqual([]);
    });

    it('keeps search_text current when the customer changes', async () => {
      await t.admin.put(`/api/v1/admin/licenses/${other.id}`).send({ customer_name: 'Žarko Čolić' }).expect(200);
      expect(await search('zarko colic')).toEqual([other.license_key]);
      expect(await search('100%')).toEqual([]);
    });

    it("shows one customer's licences by e-mail (any case) or PIB", async () => {
      const second = await createLicense(t, {
        customer_name: 'Müller branch',
        customer_email: 'office@muller-example.rs',
        product_code: 'ERP_SUITE',
      });
      // The licences table comes first on the customer page; machines and activity link the same keys again below it.
      const licencesOf = (html: string) => rowKeys(html.split('id="customer-machines"')[0]);
      const byEmail = await agent.get('/licenses/customer?email=OFFICE%40muller-example.rs').expect(200);
      expect(licencesOf(byEmail.text).sort()).toEqual([muller.license_key, second.license_key].sort());
      const byPib = await agent.get('/licenses/customer?pib=100000024').expect(200);
      expect(licencesOf(byPib.text)).toEqual([muller.license_key]);
      await agent.get('/licenses/customer?pib=123').expect(400);
      await agent.get('/licenses/customer?name=Kod').expect(303).expect('Location', '/licenses?q=Kod');
    });
  });

  describe('lists', () => {
    it('sorts by a column, shows seats used of the seats allowed, and filters licences expiring within 30 days', async () => {
      const soon = await createLicense(t, { customer_name: 'Sort AAA expiring', limits: { max_installations: 4 } });
      await setLicenseExpiry(t, soon.id, new Date(Date.now() + 5 * 86_400_000));
      await insertSeat(t, soon.id);
      const later = await createLicense(t, { customer_name: 'Sort BBB expiring' });
      await setLicenseExpiry(t, later.id, new Date(Date.now() + 20 * 86_400_000));
      await createLicense(t, { customer_name: 'Sort CCC' });
      const asc = await agent.get('/licenses?q=sort%20&sort=customer_name&dir=asc').expect(200);
      expect([...asc.text.matchAll(/>(Sort [ABC]{3})[^<]*<\/a>/g)].map((m) => m[1])).toEqual(['Sort AAA', 'Sort BBB', 'Sort CCC']);
      expect(asc.text).toContain('aria-sort="ascending"');
      const desc = await agent.get('/licenses?q=sort%20&sort=customer_name&dir=desc').expect(200);
      expect(rowKeys(desc.text)[0]).not.toBe(soon.license_key);
      expect(asc.text).toContain('1 of 4');

      const expiring = await agent.get('/licenses?q=sort%20&expiring=30&sort=expires_at&dir=asc').expect(200);
      expect(rowKeys(expiring.text)).toEqual([soon.license_key, later.license_key]);
      const panel = await agent.get('/dashboard').expect(200);
      expect(panel.text).toContain('data-testid="expiring-panel"');
      expect(panel.text).toContain(soon.license_key);
      // An unknown sort column or direction falls back to newest first.
      await agent.get('/licenses?sort=password&dir=sideways').expect(200);
    });

    it('says a page past the end in words', async () => {
      const res = await agent.get('/licenses?q=Sort%20CCC&page=3').expect(200);
      expect(res.text).toContain('Page 3 is past the end: 1 in all on 1 page.');
      expect(res.text).not.toMatch(/\d+–\d+ of/);
    });
  });

  describe('audit log', () => {
    it('filters by licence key (dashes optional) or customer, and names key and customer in each row', async () => {
      const a = await createLicense(t, { customer_name: 'Audit Čustomer', customer_email: 'audit@example.rs' });
      await t.admin.put(`/api/v1/admin/licenses/${a.id}`).send({ expires_at: '2032-12-01T00:00:00Z' }).expect(200);
      const rowsOf = (html: string) => html.match(/data-testid="audit-row"/g)?.length ?? 0;
      for (const key of [a.license_key, a.license_key.replace(/-/g, '').toLowerCase(), String(a.id)]) {
        const res = await agent.get(`/audit?${new URLSearchParams({ license_id: key }).toString()}`).expect(200);
        expect(rowsOf(res.text)).toBe(2);
        expect(res.text).toContain(`>${a.license_key}</a>`);
        expect(res.text).toContain('Audit Čustomer');
        expect(res.text).not.toContain('Ignored a filter');
      }
      const byCustomer = await agent.get('/audit?customer=audit%20custom').expect(200);
      expect(rowsOf(byCustomer.text)).toBe(2);
      expect(byCustomer.text).toMatch(/expires_at:<\/span> <span title="[^"]+">\d{4}-\d{2}-\d{2} → 2032-12-01<\/span>/);
    });

    it('answers an unknown key in words, never with validator text', async () => {
      const res = await agent.get('/audit?license_id=POS-XXXXX-XXXXX-XXXXX-XXXXX').expect(200);
      expect(res.text).toContain('no licence has the id or key “POS-XXXXX-XXXXX-XXXXX-XXXXX”');
      expect(res.text).not.toContain('must be an integer');
      const bad = await agent.get('/audit?license_id=0').expect(200);
      expect(bad.text).toContain('the licence must be an id or a key');
    });

    it('shows IPv4-mapped addresses as IPv4', async () => {
      const { id } = await createLicense(t);
      await t.sql(
        `INSERT INTO audit_entries (action, actor_type, actor, ip, license_id, details) VALUES ('license.activated', 'client', null, '::ffff:203.0.113.9', $1, '{}')`,
        [id],
      );
      const res = await agent.get(`/audit?license_id=${id}`).expect(200);
      expect(res.text).toContain('>203.0.113.9</td>');
      expect(res.text).not.toContain('::ffff:203.0.113.9');
    });

    it('reads each entry as a sentence, a client event named by its machine host name', async () => {
      const lic = await createLicense(t, { customer_name: 'Sentence d.o.o.' });
      await postForm(agent, token, `/licenses/${lic.id}/suspend`, { reason: 'Invoice 77 unpaid' }).expect(303);
      await t
        .http()
        .post('/api/v1/activate')
        .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('sentence'), hostname: 'KASA-Novi-Sad' });
      await postForm(agent, token, `/licenses/${lic.id}/reinstate`).expect(303);
      await t
        .http()
        .post('/api/v1/activate')
        .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('sentence'), hostname: 'KASA-Novi-Sad' })
        .expect(200);
      const sentences = [
        ...(await agent.get(`/audit?license_id=${lic.id}`).expect(200)).text.matchAll(/data-testid="audit-sentence">([^<]*)</g),
      ].map((m) => m[1]);
      expect(sentences).toEqual([
        `Machine KASA-Novi-Sad activated ${lic.license_key}`,
        `admin reinstated ${lic.license_key}`,
        expect.stringMatching(new RegExp(`^Machine KASA-Novi-Sad was refused ${lic.license_key} \\(\\w+\\)$`)),
        `admin suspended ${lic.license_key} — Invoice 77 unpaid`,
        expect.stringMatching(new RegExp(`^key:\\w+ created ${lic.license_key}$`)),
      ]);
    });

    // The attacker chooses its host name: escaped, one line, never a user (docs/dashboard.md, Audit lines).
    it('shows a hostile host name escaped and as a machine', async () => {
      const lic = await createLicense(t);
      await t
        .http()
        .post('/api/v1/activate')
        .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('hostile'), hostname: 'admin<script>x()</script>' })
        .expect(200);
      const html = (await agent.get(`/audit?license_id=${lic.id}`).expect(200)).text;
      expect(html).not.toContain('<script>x()');
      expect(html).toContain(`data-testid="audit-sentence">Machine admin&lt;script&gt;x()&lt;/script&gt; activated ${lic.license_key}<`);
    });

    it('offers quick ranges (today, 7 and 30 days) as links in UTC days that keep the other filters', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const weekAgo = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
      const html = unescape((await agent.get('/audit?action=license.created').expect(200)).text);
      expect(html).toContain(`href="/audit?action=license.created&from=${today}&to=${today}">Today</a>`);
      expect(html).toContain(`href="/audit?action=license.created&from=${weekAgo}&to=${today}">Last 7 days</a>`);
      expect(html).toContain('>Last 30 days</a>');
      expect(html).toContain('From (UTC day)');
      const current = unescape((await agent.get(`/audit?from=${weekAgo}&to=${today}`).expect(200)).text);
      expect(current).toContain(`href="/audit?from=${weekAgo}&to=${today}" aria-current="true">Last 7 days</a>`);
    });
  });

  it('declares the new column and indexes on the entities: no schema diff for them', async () => {
    const queries = (await t.dataSource.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query);
    expect(queries.filter((q) => /search_text|activations_fingerprint_prefix_idx|activations_hostname_trgm_idx/.test(q))).toEqual([]);
  });
});
