import { BulkLicensesService } from '../src/licenses/bulk/bulk-licenses.service';
import { Agent, flashOf, openDashboard, postFields, unescape } from './dashboard-helpers';
import { createLicense } from './support/factories';
import type { TestApp } from './support/test-app';

jest.setTimeout(60_000);

const DAY = 86_400_000;

/**
 * Bulk actions on the licence list (docs/dashboard.md, Bulk actions): select rows or all matching, renew, extend by N
 * days, suspend with a reason, export; the same confirmation and audit as the single actions; more than 100 licences
 * run as a job with a progress page, and no licence ever changes twice.
 */
describe('dashboard: bulk actions', () => {
  let t: TestApp;
  let agent: Agent;
  let csrf: string;

  beforeAll(async () => {
    ({ t, agent, token: csrf } = await openDashboard());
  }, 60_000);
  afterAll(() => t.close());

  const post = (url: string, fields: [string, string][], token = csrf) => postFields(agent, token, url, fields);
  const ids = (list: { id: number }[]) => list.map((l): [string, string] => ['ids', String(l.id)]);
  const flash = (url: string) => flashOf(agent, url);
  const expiry = async (id: number) =>
    (await t.sql<{ expires_at: Date | null }>('SELECT expires_at FROM licenses WHERE id = $1', [id]))[0].expires_at;
  const operationOf = (location: string) => /^\/licenses\/bulk\/(\d+)$/.exec(location)?.[1] as string;
  /** Creates `n` licences for one customer name (a search for it selects exactly them). */
  const many = async (n: number, name: string, overrides = {}) => {
    const made = [];
    for (let i = 0; i < n; i += 10)
      made.push(
        ...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => createLicense(t, { customer_name: name, ...overrides })))),
      );
    return made;
  };

  it('the list carries a checkbox per row, the view in the bar, and the bulk actions', async () => {
    const lic = await createLicense(t, { customer_name: 'Bulk List Kafana' });
    const page = await agent.get('/licenses?q=Bulk+List+Kafana&size=50').expect(200);
    expect(page.text).toContain(`name="ids" value="${lic.id}" form="bulk-form"`);
    expect(page.text).toMatch(/<input type="hidden" name="q" value="Bulk List Kafana">/);
    expect(page.text).toMatch(/<input type="hidden" name="size" value="50">/);
    for (const action of ['renew', 'extend', 'suspend', 'export']) expect(page.text).toContain(`<option value="${action}">`);
    expect(page.text).toContain('All 1 matching');
    // The customer page lists licences without bulk checkboxes.
    await createLicense(t, { customer_name: 'Bulk List Kafana', customer_email: 'kafana@bulk.example' });
    const customer = await agent.get('/licenses/customer?email=kafana@bulk.example').expect(200);
    expect(customer.text).toContain('data-testid="license-row"');
    expect(customer.text).not.toContain('name="ids"');
  });

  it('renew selected rows: a confirmation naming them, then each renewed and audited like Renew; PERPETUAL skipped with why', async () => {
    const [a, b] = await many(2, 'Bulk Renew Pekara');
    const perpetual = await createLicense(t, { customer_name: 'Bulk Renew Pekara', license_type: 'PERPETUAL' });
    const before = { a: (await expiry(a.id)) as Date, b: (await expiry(b.id)) as Date };

    const confirm = await post('/licenses/bulk/confirm', [
      ['action', 'renew'],
      ...ids([a, b, perpetual]),
      ['q', 'Bulk Renew Pekara'],
    ]).expect(200);
    expect(confirm.text).toContain('<h1>Renew 3 licences</h1>');
    expect(confirm.text).toContain('The <strong>3</strong> licences you selected.');
    for (const l of [a, b, perpetual]) expect(confirm.text).toContain(l.license_key);
    expect(unescape(confirm.text)).toContain('href="/licenses?q=Bulk+Renew+Pekara">Cancel</a>');
    // Confirmation only: nothing changed yet.
    expect(await expiry(a.id)).toEqual(before.a);

    const done = await post('/licenses/bulk', [['action', 'renew'], ...ids([a, b, perpetual])]).expect(303);
    const op = operationOf(done.headers.location);
    expect(op).toBeDefined();
    expect(await flash(done.headers.location)).toEqual(['success', 'Renew: 3 licences processed.']);
    for (const [id, was] of [
      [a.id, before.a],
      [b.id, before.b],
    ] as const) {
      const next = new Date(was);
      next.setUTCMonth(next.getUTCMonth() + 12);
      expect((await expiry(id))?.toISOString()).toBe(next.toISOString());
    }
    expect(await expiry(perpetual.id)).toBeNull();

    const entries = await t.sql(
      `SELECT license_id, actor_type, actor, details FROM audit_entries WHERE action = 'license.updated' AND (details->>'bulk_operation')::int = $1 ORDER BY license_id`,
      [Number(op)],
    );
    expect(entries.map((e) => e.license_id)).toEqual([a.id, b.id].sort((x, y) => x - y));
    for (const e of entries) {
      expect(e).toMatchObject({ actor_type: 'dashboard', actor: 'staff:admin' });
      expect(e.details).toMatchObject({ renewed: true, changes: { expires_at: {} } });
    }
    const show = await agent.get(done.headers.location).expect(200);
    expect(show.text).toContain('Finished: 3 of 3');
    expect(show.text).toMatch(/<strong>2<\/strong> changed · <strong>1<\/strong> skipped/);
    const skipped = /data-testid="bulk-skipped">([\s\S]*?)<\/tr>/.exec(show.text)?.[1] ?? '';
    expect(skipped).toContain(perpetual.license_key);
    expect(skipped).toContain('A PERPETUAL licence never expires: there is nothing to renew');
    expect((await agent.get('/licenses/bulk').expect(200)).text).toContain(`href="/licenses/bulk/${op}">Renew for one term</a>`);
  });

  it('extend every licence matching a view by N days, from the later of now and each expiry', async () => {
    const made = await many(3, 'Bulk Extend Apoteka');
    await t.sql(`UPDATE licenses SET expires_at = now() - interval '10 days' WHERE id = $1`, [made[0].id]);
    const before = await Promise.all(made.map((l) => expiry(l.id)));
    const other = await createLicense(t, { customer_name: 'Not In This View' });
    const otherBefore = await expiry(other.id);

    const confirm = await post('/licenses/bulk/confirm', [
      ['action', 'extend'],
      ['scope', 'all'],
      ['q', 'Bulk Extend Apoteka'],
    ]).expect(200);
    expect(confirm.text).toContain('<h1>Extend 3 licences</h1>');
    expect(confirm.text).toContain('Every licence matching the list’s filters: <strong>3</strong> now.');
    expect(confirm.text).toContain('<input type="hidden" name="scope" value="all">');
    expect(confirm.text).toContain('id="field-days"');

    const started = Date.now();
    await post('/licenses/bulk', [
      ['action', 'extend'],
      ['days', '45'],
      ['scope', 'all'],
      ['q', 'Bulk Extend Apoteka'],
    ]).expect(303);
    const expired = (await expiry(made[0].id)) as Date;
    expect(expired.getTime()).toBeGreaterThanOrEqual(started + 45 * DAY - 5_000);
    expect(expired.getTime()).toBeLessThanOrEqual(Date.now() + 45 * DAY);
    for (const i of [1, 2]) expect((await expiry(made[i].id))?.getTime()).toBe((before[i] as Date).getTime() + 45 * DAY);
    expect(await expiry(other.id)).toEqual(otherBefore);
    const audit = await t.sql(
      `SELECT details FROM audit_entries WHERE license_id = $1 AND action = 'license.updated' ORDER BY id DESC LIMIT 1`,
      [made[1].id],
    );
    expect(audit[0].details).toMatchObject({ extended_days: 45 });
  });

  it.each([
    ['0', 'Days must be at least 1'],
    ['3651', 'Days must be at most 3650'],
    ['2.5', 'Days must be a whole number'],
    ['abc', 'Days must be a whole number'],
    ['', 'Give the number of days'],
  ])('refuses extend by %p days with the form again (400) and changes nothing', async (days, message) => {
    const lic = await createLicense(t, { customer_name: 'Bulk Days Refused' });
    const was = await expiry(lic.id);
    const res = await post('/licenses/bulk', [['action', 'extend'], ['days', days], ...ids([lic])]).expect(400);
    expect(unescape(res.text)).toContain(message);
    expect(res.text).toContain('aria-invalid="true"');
    expect(res.text).toContain(`name="ids" value="${lic.id}"`);
    expect(await expiry(lic.id)).toEqual(was);
  });

  it('suspend with a reason: each audited with it; revoked and already suspended ones skipped', async () => {
    const [a, suspended, revoked] = await many(3, 'Bulk Suspend Trafika');
    await t.admin.put(`/api/v1/admin/licenses/${suspended.id}`).send({ active: false }).expect(200);
    await t.admin.post(`/api/v1/admin/licenses/${revoked.id}/revoke`).send({ reason: 'chargeback' }).expect(200);
    const done = await post('/licenses/bulk', [
      ['action', 'suspend'],
      ['reason', 'Unpaid invoice 2026-11'],
      ...ids([a, suspended, revoked]),
    ]).expect(303);
    const op = Number(operationOf(done.headers.location));
    const rows = await t.sql('SELECT id, active FROM licenses WHERE id = ANY($1::int[]) ORDER BY id', [[a.id, suspended.id, revoked.id]]);
    expect(rows.find((r) => r.id === a.id)?.active).toBe(false);
    const audit = await t.sql(`SELECT license_id, details FROM audit_entries WHERE (details->>'bulk_operation')::int = $1`, [op]);
    expect(audit).toEqual([
      {
        license_id: a.id,
        details: expect.objectContaining({ reason: 'Unpaid invoice 2026-11', changes: { active: { from: true, to: false } } }),
      },
    ]);
    const items = await t.sql(`SELECT license_id, outcome, message FROM license_bulk_items WHERE operation_id = $1 ORDER BY license_id`, [
      op,
    ]);
    expect(items).toEqual(
      [
        { license_id: a.id, outcome: 'done', message: null },
        { license_id: suspended.id, outcome: 'skipped', message: 'The licence is already suspended' },
        { license_id: revoked.id, outcome: 'skipped', message: 'A revoked licence cannot be suspended' },
      ].sort((x, y) => x.license_id - y.license_id),
    );
  });

  it('export selected rows: a CSV of exactly those licences, no confirmation', async () => {
    const [a, b, c] = await many(3, 'Bulk Export Butik');
    const res = await post('/licenses/bulk/confirm', [['action', 'export'], ...ids([a, c])]).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="licenses-/);
    expect(res.text).toContain(a.license_key);
    expect(res.text).toContain(c.license_key);
    expect(res.text).not.toContain(b.license_key);
    expect(res.text.trim().split('\n')).toHaveLength(3);
    const all = await post('/licenses/bulk/confirm', [
      ['action', 'export'],
      ['scope', 'all'],
      ['q', 'Bulk Export Butik'],
    ]).expect(200);
    expect(all.text.trim().split('\n')).toHaveLength(4);
  });

  it('more than 100 licences run as a job: a progress page, then every licence extended exactly once', async () => {
    const made = await many(105, 'Bulk Job Mesara');
    const before = new Map(await Promise.all(made.map(async (l) => [l.id, (await expiry(l.id)) as Date] as const)));
    const confirm = await post('/licenses/bulk/confirm', [
      ['action', 'extend'],
      ['scope', 'all'],
      ['q', 'Bulk Job Mesara'],
    ]).expect(200);
    expect(confirm.text).toContain('<h1>Extend 105 licences</h1>');
    expect(confirm.text).toContain('More than 100 licences: the change runs in the background');
    const done = await post('/licenses/bulk', [
      ['action', 'extend'],
      ['days', '7'],
      ['scope', 'all'],
      ['q', 'Bulk Job Mesara'],
    ]).expect(303);
    expect(await flash(done.headers.location)).toEqual(['success', 'Extend: 105 licences are being processed.']);
    const progress = `${done.headers.location}/progress`;
    let fragment = '';
    for (let tries = 0; tries < 100 && !fragment.includes('Finished'); tries++) {
      fragment = (await agent.get(progress).expect(200)).text;
      if (!fragment.includes('Finished')) await new Promise((r) => setTimeout(r, 250));
    }
    expect(fragment).toContain('Finished: 105 of 105');
    expect(fragment).not.toContain('data-poll');
    expect(fragment).not.toContain('<html');
    for (const l of made) expect((await expiry(l.id))?.getTime()).toBe((before.get(l.id) as Date).getTime() + 7 * DAY);
    const op = Number(operationOf(done.headers.location));
    expect((await t.sql(`SELECT count(*)::int AS n FROM audit_entries WHERE (details->>'bulk_operation')::int = $1`, [op]))[0].n).toBe(105);
  });

  it('two workers on one operation (a retried job and a second instance) never change a licence twice', async () => {
    const made = await many(120, 'Bulk Twice Frizer');
    const before = new Map(await Promise.all(made.map(async (l) => [l.id, (await expiry(l.id)) as Date] as const)));
    const service = t.app.get(BulkLicensesService);
    const actor = { type: 'dashboard' as const, name: 'admin', ip: '127.0.0.1' };
    const { id } = await service.start({ action: 'extend', days: 3 }, { ids: made.map((l) => l.id) }, actor);
    // The job engine works it too; these two race it and each other.
    await Promise.all([service.run(id), service.run(id), service.run(id)]);
    for (const l of made) expect((await expiry(l.id))?.getTime()).toBe((before.get(l.id) as Date).getTime() + 3 * DAY);
    const audit = await t.sql(
      `SELECT license_id, count(*)::int AS n FROM audit_entries WHERE (details->>'bulk_operation')::int = $1 GROUP BY license_id`,
      [Number(id)],
    );
    expect(audit).toHaveLength(120);
    expect(audit.every((r) => r.n === 1)).toBe(true);
    const view = await service.get(id);
    expect(view.counts).toEqual({ done: 120, skipped: 0, pending: 0 });
    expect(view.finished_at).not.toBeNull();
  });

  describe('attacker', () => {
    it('without the CSRF token nothing starts (403)', async () => {
      const lic = await createLicense(t, { customer_name: 'Bulk Csrf' });
      const was = await expiry(lic.id);
      await post('/licenses/bulk', [['action', 'renew'], ...ids([lic])], 'forged').expect(403);
      await agent.post('/licenses/bulk').type('form').send(`action=renew&ids=${lic.id}`).expect(403);
      expect(await expiry(lic.id)).toEqual(was);
    });

    it('without a session every bulk route goes to the login page', async () => {
      for (const url of ['/licenses/bulk', '/licenses/bulk/1', '/licenses/bulk/1/progress'])
        await t.http().get(url).expect(302).expect('Location', '/login');
      await t.http().post('/licenses/bulk').type('form').send('action=renew&ids=1').expect(303).expect('Location', '/login');
      await t.http().post('/licenses/bulk/confirm').type('form').send('action=export&ids=1').expect(303).expect('Location', '/login');
    });

    it.each([
      ['a word', ['abc']],
      ['a negative id', ['-1']],
      ['zero', ['0']],
      ['beyond an int', ['99999999999']],
      ['an exponent', ['1e3']],
      ['201 ids', Array.from({ length: 201 }, (_, i) => String(i + 1))],
    ])('ids that are %s: 400, an HTML page, nothing started', async (_, list) => {
      const count = async () => (await t.sql('SELECT count(*)::int AS n FROM license_bulk_operations'))[0].n;
      const was = await count();
      const res = await post('/licenses/bulk', [['action', 'renew'], ...list.map((v): [string, string] => ['ids', v])]);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).not.toMatch(/at .*\.ts:\d+/);
      await post('/licenses/bulk/confirm', [['action', 'renew'], ...list.map((v): [string, string] => ['ids', v])]).expect(400);
      expect(await count()).toBe(was);
    });

    it('a whole page of 200 rows with every filter of the view fits one form', async () => {
      const view: [string, string][] = [
        ['q', 'no such licence anywhere'],
        ['product', 'POS_RETAIL'],
        ['status', 'active'],
        ['license_type', 'YEARLY'],
        ['trial_ip', '192.0.2.1'],
        ['expiring', '30'],
        ['size', '200'],
        ['sort', 'expires_at'],
        ['dir', 'asc'],
        ['page', '3'],
      ];
      const list = Array.from({ length: 200 }, (_, i): [string, string] => ['ids', String(2_000_000_000 + i)]);
      const res = await post('/licenses/bulk', [['action', 'renew'], ['scope', 'selected'], ...list, ...view]).expect(303);
      expect(res.headers.location).toMatch(/^\/licenses\?q=no\+such/);
    });

    it('an unknown action, an empty selection or ids of no licence: a message on the list, nothing started', async () => {
      const res = await post('/licenses/bulk/confirm', [
        ['action', 'delete'],
        ['ids', '1'],
        ['q', 'x'],
      ]).expect(303);
      expect(res.headers.location).toBe('/licenses?q=x');
      expect(await flash(res.headers.location)).toEqual(['error', 'Choose what to do with the selected licences.']);
      const none = await post('/licenses/bulk/confirm', [['action', 'renew']]).expect(303);
      expect(await flash(none.headers.location)).toEqual(['error', 'Select at least one licence, or choose all matching.']);
      const ghost = await post('/licenses/bulk', [
        ['action', 'renew'],
        ['ids', '2147483647'],
      ]).expect(303);
      expect(await flash(ghost.headers.location)).toEqual(['error', 'No licence is selected: pick at least one']);
      await post('/licenses/bulk', [
        ['action', 'delete'],
        ['ids', '1'],
      ]).expect(400);
    });

    it('a reason that is too long or holds a NUL character is refused with the form', async () => {
      const lic = await createLicense(t, { customer_name: 'Bulk Reason Refused' });
      const long = await post('/licenses/bulk', [['action', 'suspend'], ['reason', 'x'.repeat(501)], ...ids([lic])]).expect(400);
      expect(long.text).toContain('aria-invalid="true"');
      await post('/licenses/bulk', [['action', 'suspend'], ['reason', 'bad\u0000byte'], ...ids([lic])]).expect(400);
      expect((await t.sql('SELECT active FROM licenses WHERE id = $1', [lic.id]))[0].active).toBe(true);
    });

    it('unknown or malformed operation ids are a 404 page', async () => {
      await agent.get('/licenses/bulk/999999999').expect(404);
      await agent.get('/licenses/bulk/abc').expect(404);
      await agent.get('/licenses/bulk/1%27%20OR%201=1').expect(404);
      await agent.get('/licenses/bulk/99999999999999999999999/progress').expect(404);
    });

    it('hostile text in a reason and a customer name is escaped on the bulk pages', async () => {
      const lic = await createLicense(t, { customer_name: '<script>alert(1)</script>', license_type: 'PERPETUAL' });
      const confirm = await post('/licenses/bulk/confirm', [['action', 'renew'], ...ids([lic])]).expect(200);
      expect(confirm.text).not.toContain('<script>alert(1)</script>');
      const done = await post('/licenses/bulk', [['action', 'suspend'], ['reason', '<img src=x onerror=alert(1)>'], ...ids([lic])]).expect(
        303,
      );
      const show = await agent.get(done.headers.location).expect(200);
      expect(show.text).not.toContain('<img src=x');
      expect((await agent.get('/licenses/bulk').expect(200)).text).not.toContain('<img src=x');
    });
  });
});
