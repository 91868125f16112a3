import { BulkLicensesService } from '../src/licenses/bulk/bulk-licenses.service';
import { UsersService } from '../src/staff/users.service';
import { Agent, flashOf, loggedInAgent, openDashboard, postFields, unescape } from './dashboard-helpers';
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
  const operationCount = async () => (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM license_bulk_operations'))[0].n;
  /** The confirmation's preview rows: each licence's expiry now and after (ISO), or why it is skipped. */
  const previewOf = (html: string) =>
    new Map(
      [...html.matchAll(/data-license="(\d+)">([\s\S]*?)<\/tr>/g)].map((m) => [
        Number(m[1]),
        {
          now: /data-testid="bulk-preview-now">(?:<time datetime="([^"]+)")?/.exec(m[2])?.[1] ?? null,
          after: /data-testid="bulk-preview-after">(?:<time datetime="([^"]+)")?/.exec(m[2])?.[1] ?? null,
          skip: /skipped: ([^<]*)</.exec(m[2])?.[1] ?? null,
        },
      ]),
    );
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
    const started = await operationCount();
    const res = await post('/licenses/bulk', [['action', 'extend'], ['days', days], ...ids([lic])]).expect(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(unescape(res.text)).toContain(message);
    expect(res.text).toContain('aria-invalid="true"');
    expect(res.text).toContain(`name="ids" value="${lic.id}"`);
    expect(await expiry(lic.id)).toEqual(was);
    expect(await operationCount()).toBe(started);
    // The same days asked for as a preview: refused the same way (an empty field previews the current expiries).
    if (days) {
      const preview = await post('/licenses/bulk/confirm', [['action', 'extend'], ['days', days], ...ids([lic])]).expect(400);
      expect(unescape(preview.text)).toContain(message);
      expect(preview.text).not.toContain('data-testid="bulk-preview-after"');
    }
    // Also as a "preset" (a forged quick pick).
    if (days) await post('/licenses/bulk/confirm', [['action', 'extend'], ['preset', days], ...ids([lic])]).expect(400);
    expect(await operationCount()).toBe(started);
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

  describe('safe edits: empty days, quick picks, the preview, a second step past a year', () => {
    it('extend: the days field starts empty, with quick picks that fill it (no script needed) and a preview of each date', async () => {
      // The PERPETUAL one first: the preview shows the first ten in id order, it among them.
      const perpetual = await createLicense(t, { customer_name: 'Bulk Preview Cvecara', license_type: 'PERPETUAL' });
      const made = await many(12, 'Bulk Preview Cvecara');
      const first = await post('/licenses/bulk/confirm', [
        ['action', 'extend'],
        ['scope', 'all'],
        ['q', 'Bulk Preview Cvecara'],
      ]).expect(200);
      expect(first.text).toMatch(/<input id="field-days" type="number" name="days"[^>]* value=""/);
      for (const d of ['7', '30', '90', '365'])
        expect(first.text).toContain(`name="preset" value="${d}" formaction="/licenses/bulk/confirm" formnovalidate`);
      // Before the days are known: the current expiries only, and how many more are not shown.
      const before = previewOf(first.text);
      expect(before.size).toBe(10);
      for (const [id, row] of before) expect(row.now).toBe((await expiry(id))?.toISOString() ?? null);
      expect(first.text).not.toContain('data-testid="bulk-preview-after"');
      expect(first.text).toContain('and 3 more, not shown here');

      // The 30-day pick: the same page, the field filled in and the pick marked, each new date beside the old.
      const picked = await post('/licenses/bulk/confirm', [
        ['action', 'extend'],
        ['days', ''],
        ['preset', '30'],
        ['scope', 'all'],
        ['q', 'Bulk Preview Cvecara'],
      ]).expect(200);
      expect(picked.text).toMatch(/<input id="field-days" type="number" name="days"[^>]* value="30"/);
      expect(picked.text).toContain(
        'name="preset" value="30" formaction="/licenses/bulk/confirm" formnovalidate class="button-small" data-testid="bulk-preset" aria-pressed="true"',
      );
      const preview = previewOf(picked.text);
      const shown = [...made.map((l) => l.id), perpetual.id].sort((x, y) => x - y).slice(0, 10);
      expect([...preview.keys()]).toEqual(shown);
      expect(preview.get(perpetual.id)).toEqual({
        now: null,
        after: null,
        skip: 'A PERPETUAL licence never expires: there is nothing to extend',
      });
      for (const id of shown.filter((i) => i !== perpetual.id))
        expect(preview.get(id)?.after).toBe(new Date(((await expiry(id)) as Date).getTime() + 30 * DAY).toISOString());
      // Typed days and Preview: the same.
      const typed = await post('/licenses/bulk/confirm', [['action', 'extend'], ['days', '45'], ...ids(made.slice(0, 2))]).expect(200);
      expect(previewOf(typed.text).get(made[0].id)?.after).toBe(
        new Date(((await expiry(made[0].id)) as Date).getTime() + 45 * DAY).toISOString(),
      );

      // Confirmed: each licence ends exactly where its preview said.
      const done = await post('/licenses/bulk', [
        ['action', 'extend'],
        ['days', '30'],
        ['scope', 'all'],
        ['q', 'Bulk Preview Cvecara'],
      ]).expect(303);
      expect(operationOf(done.headers.location)).toBeDefined();
      for (const [id, row] of preview) {
        if (row.skip) expect(await expiry(id)).toBeNull();
        else expect(((await expiry(id)) as Date).toISOString()).toBe(row.after);
      }
    });

    it('renew and suspend: the preview shows each new expiry (or state) and what is skipped, by the rules that apply them', async () => {
      const [a, b] = await many(2, 'Bulk Preview Renew');
      await t.admin.post(`/api/v1/admin/licenses/${b.id}/revoke`).send({ reason: 'fraud' }).expect(200);
      const renew = previewOf((await post('/licenses/bulk/confirm', [['action', 'renew'], ...ids([a, b])]).expect(200)).text);
      expect(renew.get(b.id)?.skip).toBe('A revoked licence cannot be renewed');
      await post('/licenses/bulk', [['action', 'renew'], ...ids([a, b])]).expect(303);
      expect(((await expiry(a.id)) as Date).toISOString()).toBe(renew.get(a.id)?.after);

      const suspend = await post('/licenses/bulk/confirm', [['action', 'suspend'], ...ids([a, b])]).expect(200);
      const row = (id: number) => new RegExp(`data-license="${id}">[\\s\\S]*?</tr>`).exec(suspend.text)?.[0] ?? '';
      expect(row(a.id)).toMatch(/bulk-preview-now">active<[\s\S]*bulk-preview-after">suspended</);
      expect(row(b.id)).toContain('skipped: A revoked licence cannot be suspended');
    });

    it('more than 366 days asks once more, naming the days and the new dates, before anything starts', async () => {
      const [a, b] = await many(2, 'Bulk Long Zlatara');
      const was = { a: (await expiry(a.id)) as Date, b: (await expiry(b.id)) as Date };
      const started = await operationCount();
      const again = await post('/licenses/bulk', [
        ['action', 'extend'],
        ['days', '400'],
        ...ids([a, b]),
        ['q', 'Bulk Long Zlatara'],
      ]).expect(200);
      expect(again.text).toContain('<h1>Extend 2 licences by 400 days?</h1>');
      expect(again.text).toContain('data-testid="bulk-long-days"><strong>400 days</strong> is more than 366');
      expect(again.text).toContain('<input type="hidden" name="confirm_days" value="400">');
      expect(again.text).toContain('Yes, extend 2 licences by 400 days');
      expect(previewOf(again.text).get(a.id)?.after).toBe(new Date(was.a.getTime() + 400 * DAY).toISOString());
      expect(await operationCount()).toBe(started);
      expect(await expiry(a.id)).toEqual(was.a);
      // A confirmation for other days is no confirmation: asked again.
      await post('/licenses/bulk', [['action', 'extend'], ['days', '400'], ['confirm_days', '500'], ...ids([a, b])]).expect(200);
      await post('/licenses/bulk', [['action', 'extend'], ['days', '366'], ...ids([b])]).expect(303);
      expect(((await expiry(b.id)) as Date).getTime()).toBe(was.b.getTime() + 366 * DAY);
      expect(await operationCount()).toBe(started + 1);

      await post('/licenses/bulk', [['action', 'extend'], ['days', '400'], ['confirm_days', '400'], ...ids([a])]).expect(303);
      expect(((await expiry(a.id)) as Date).getTime()).toBe(was.a.getTime() + 400 * DAY);
    });
  });

  describe('undo', () => {
    const service = () => t.app.get(BulkLicensesService);
    const undoAudit = (undoOf: string | number) =>
      t.sql<{ license_id: number; details: Record<string, unknown>; action: string }>(
        `SELECT license_id, action, details FROM audit_entries WHERE (details->>'undo_of')::bigint = $1 ORDER BY license_id`,
        [Number(undoOf)],
      );

    it('moves an extension back to each stored expiry, audited with undo_of; skips one changed since, with why; never twice', async () => {
      const made = await many(3, 'Bulk Undo Sajdzija');
      const before = new Map(await Promise.all(made.map(async (l) => [l.id, (await expiry(l.id)) as Date] as const)));
      const done = await post('/licenses/bulk', [['action', 'extend'], ['days', '20'], ...ids(made)]).expect(303);
      const op = operationOf(done.headers.location);
      const items = await t.sql(
        `SELECT license_id, previous_expires_at, previous_active, new_expires_at FROM license_bulk_items WHERE operation_id = $1 ORDER BY license_id`,
        [op],
      );
      for (const item of items) {
        expect(item.previous_expires_at).toEqual(before.get(item.license_id));
        expect(item.previous_active).toBe(true);
        expect(item.new_expires_at).toEqual(await expiry(item.license_id));
      }
      const page = await agent.get(done.headers.location).expect(200);
      expect(page.text).toContain(`href="/licenses/bulk/${op}/undo" data-testid="bulk-undo">Undo…</a>`);

      // One licence is changed by hand since: the undo leaves it, saying why.
      const [moved, ...rest] = made;
      const byHand = new Date(Date.now() + 500 * DAY);
      await t.admin.put(`/api/v1/admin/licenses/${moved.id}`).send({ expires_at: byHand.toISOString() }).expect(200);

      const confirm = await agent.get(`/licenses/bulk/${op}/undo`).expect(200);
      expect(confirm.text).toContain('moved back to the expiry each had before it');
      const preview = previewOf(confirm.text);
      expect(preview.get(rest[0].id)?.after).toBe(before.get(rest[0].id)?.toISOString());
      expect(preview.get(moved.id)?.skip).toMatch(/^Changed since the operation: it expires /);
      expect(await expiry(rest[0].id)).not.toEqual(before.get(rest[0].id));

      const undone = await post(`/licenses/bulk/${op}/undo`, []).expect(303);
      const undoOp = operationOf(undone.headers.location);
      expect(undoOp).not.toBe(op);
      expect(await flash(undone.headers.location)).toEqual(['success', 'Undo: 3 licences processed.']);
      for (const l of rest) expect(await expiry(l.id)).toEqual(before.get(l.id));
      expect(await expiry(moved.id)).toEqual(byHand);
      const audit = await undoAudit(op);
      expect(audit.map((e) => e.license_id)).toEqual(rest.map((l) => l.id).sort((x, y) => x - y));
      for (const e of audit) {
        expect(e.action).toBe('license.updated');
        expect(e.details).toMatchObject({ bulk_operation: Number(undoOp), undo_of: Number(op), changes: { expires_at: {} } });
      }
      const undoPage = await agent.get(undone.headers.location).expect(200);
      expect(undoPage.text).toContain(`<h1>Undo of bulk operation ${op}</h1>`);
      expect(undoPage.text).toMatch(/<strong>2<\/strong> changed · <strong>1<\/strong> skipped/);
      expect(undoPage.text).toMatch(/Changed since the operation: it expires \d{4}-\d\d-\d\d \d\d:\d\d UTC, not/);
      expect(undoPage.text).not.toContain('data-testid="bulk-undo"');
      const original = await agent.get(done.headers.location).expect(200);
      expect(original.text).toContain(`Undone by <a href="/licenses/bulk/${undoOp}">bulk operation ${undoOp}</a>`);
      expect(original.text).not.toContain('data-testid="bulk-undo"');

      // Not twice, and an undo is not undone.
      const count = await operationCount();
      const twice = await post(`/licenses/bulk/${op}/undo`, []).expect(303);
      expect(twice.headers.location).toBe(`/licenses/bulk/${op}`);
      expect(await flash(twice.headers.location)).toEqual(['error', `Already undone by bulk operation ${undoOp}`]);
      expect((await agent.get(`/licenses/bulk/${op}/undo`).expect(409)).text).toContain(`Already undone by bulk operation ${undoOp}`);
      const ofUndo = await post(`/licenses/bulk/${undoOp}/undo`, []).expect(303);
      expect(await flash(ofUndo.headers.location)).toEqual(['error', 'An undo cannot be undone: make the change again instead']);
      expect(await operationCount()).toBe(count);
      for (const l of rest) expect(await expiry(l.id)).toEqual(before.get(l.id));
    });

    it('a renewal moves back too; a suspension is undone by reinstating, skipping one reinstated or revoked since', async () => {
      const [r] = await many(1, 'Bulk Undo Renew');
      const was = await expiry(r.id);
      const renewed = await post('/licenses/bulk', [['action', 'renew'], ...ids([r])]).expect(303);
      await post(`/licenses/bulk/${operationOf(renewed.headers.location)}/undo`, []).expect(303);
      expect(await expiry(r.id)).toEqual(was);

      const [a, b, c] = await many(3, 'Bulk Undo Suspend');
      const done = await post('/licenses/bulk', [['action', 'suspend'], ['reason', 'audit'], ...ids([a, b, c])]).expect(303);
      const op = operationOf(done.headers.location);
      await t.admin.put(`/api/v1/admin/licenses/${b.id}`).send({ active: true }).expect(200);
      await t.admin.post(`/api/v1/admin/licenses/${c.id}/revoke`).send({ reason: 'fraud' }).expect(200);
      expect((await agent.get(`/licenses/bulk/${op}/undo`).expect(200)).text).toContain('are reinstated');
      const undone = await post(`/licenses/bulk/${op}/undo`, []).expect(303);
      const state = async (id: number) => (await t.sql('SELECT active, revoked FROM licenses WHERE id = $1', [id]))[0];
      expect(await state(a.id)).toEqual({ active: true, revoked: false });
      expect(await state(c.id)).toEqual({ active: false, revoked: true });
      const audit = await undoAudit(op);
      expect(audit).toEqual([
        {
          license_id: a.id,
          action: 'license.updated',
          details: expect.objectContaining({ changes: { active: { from: false, to: true } } }),
        },
      ]);
      const skipped = await t.sql(
        `SELECT license_id, message FROM license_bulk_items WHERE operation_id = $1 AND outcome = 'skipped' ORDER BY license_id`,
        [operationOf(undone.headers.location)],
      );
      expect(skipped).toEqual(
        [
          { license_id: b.id, message: 'Reinstated since the operation: nothing to undo' },
          { license_id: c.id, message: 'Revoked since the operation: left as it is' },
        ].sort((x, y) => x.license_id - y.license_id),
      );
    });

    it('refuses an operation still running, one that changed nothing, and skips an item kept before undo existed', async () => {
      const [a, b] = await many(2, 'Bulk Undo Refusals');
      const done = await post('/licenses/bulk', [['action', 'extend'], ['days', '5'], ...ids([a, b])]).expect(303);
      const op = operationOf(done.headers.location);
      await t.sql('UPDATE license_bulk_operations SET finished_at = NULL WHERE id = $1', [op]);
      expect(await flash((await post(`/licenses/bulk/${op}/undo`, []).expect(303)).headers.location)).toEqual([
        'error',
        'The operation is still running: undo it once it has finished',
      ]);
      await t.sql('UPDATE license_bulk_operations SET finished_at = now() WHERE id = $1', [op]);
      // An item changed before items kept anything (the migration's older rows): skipped, said why.
      await t.sql(
        'UPDATE license_bulk_items SET previous_active = NULL, previous_expires_at = NULL WHERE operation_id = $1 AND license_id = $2',
        [op, a.id],
      );
      const was = await expiry(a.id);
      const undone = await post(`/licenses/bulk/${op}/undo`, []).expect(303);
      expect(await expiry(a.id)).toEqual(was);
      expect((await agent.get(undone.headers.location).expect(200)).text).toContain(
        'Nothing was kept of this licence before the change: it cannot be moved back',
      );

      const perpetual = await createLicense(t, { customer_name: 'Bulk Undo Refusals', license_type: 'PERPETUAL' });
      const nothing = await post('/licenses/bulk', [['action', 'renew'], ...ids([perpetual])]).expect(303);
      const empty = operationOf(nothing.headers.location);
      expect((await agent.get(nothing.headers.location).expect(200)).text).not.toContain('data-testid="bulk-undo"');
      expect(await flash((await post(`/licenses/bulk/${empty}/undo`, []).expect(303)).headers.location)).toEqual([
        'error',
        'Nothing to undo: the operation changed no licence',
      ]);
    });

    it('two undo requests at once start one undo; three workers on it move each licence back exactly once', async () => {
      const made = await many(120, 'Bulk Undo Race');
      const before = new Map(await Promise.all(made.map(async (l) => [l.id, (await expiry(l.id)) as Date] as const)));
      const actor = { type: 'dashboard' as const, name: 'admin', ip: '127.0.0.1' };
      const { id } = await service().start({ action: 'extend', days: 9 }, { ids: made.map((l) => l.id) }, actor);
      await service().run(id);
      const results = await Promise.allSettled([service().undo(id, actor), service().undo(id, actor), service().undo(id, actor)]);
      const started = results.filter((r) => r.status === 'fulfilled');
      expect(started).toHaveLength(1);
      for (const r of results.filter((x) => x.status === 'rejected'))
        expect(r.reason).toMatchObject({
          status: 409,
          message: expect.stringMatching(/^Already undone by bulk operation \d+$/),
        });
      const undoId = (started[0] as PromiseFulfilledResult<{ id: string; ranInline: boolean }>).value.id;
      // 120 licences: a job; the job engine works it too, these race it and each other.
      await Promise.all([service().run(undoId), service().run(undoId), service().run(undoId)]);
      for (const l of made) expect(await expiry(l.id)).toEqual(before.get(l.id));
      const audit = await t.sql(
        `SELECT license_id, count(*)::int AS n FROM audit_entries WHERE (details->>'undo_of')::bigint = $1 GROUP BY license_id`,
        [Number(id)],
      );
      expect(audit).toHaveLength(120);
      expect(audit.every((r) => r.n === 1)).toBe(true);
      expect((await service().get(undoId)).counts).toEqual({ done: 120, skipped: 0, pending: 0 });
      // Over HTTP at once as well: one undo, the other told.
      const [x, y] = await many(2, 'Bulk Undo Race Http');
      const op = operationOf(
        (await post('/licenses/bulk', [['action', 'extend'], ['days', '4'], ...ids([x, y])]).expect(303)).headers.location,
      );
      const answers = await Promise.all([post(`/licenses/bulk/${op}/undo`, []), post(`/licenses/bulk/${op}/undo`, [])]);
      expect(answers.map((r) => r.status)).toEqual([303, 303]);
      expect(answers.filter((r) => r.headers.location !== `/licenses/bulk/${op}`)).toHaveLength(1);
      expect((await t.sql('SELECT count(*)::int AS n FROM license_bulk_operations WHERE undo_of = $1', [op]))[0].n).toBe(1);
      expect((await undoAudit(op)).map((e) => e.license_id)).toEqual([x.id, y.id].sort((p, q) => p - q));
    });
  });

  describe('attacker', () => {
    it('without the CSRF token nothing starts (403)', async () => {
      const lic = await createLicense(t, { customer_name: 'Bulk Csrf' });
      const was = await expiry(lic.id);
      await post('/licenses/bulk', [['action', 'renew'], ...ids([lic])], 'forged').expect(403);
      await agent.post('/licenses/bulk').type('form').send(`action=renew&ids=${lic.id}`).expect(403);
      expect(await expiry(lic.id)).toEqual(was);
    });

    it('undo: without the CSRF token nothing moves back (403); an unknown operation is a 404 page', async () => {
      const [lic] = await many(1, 'Bulk Undo Csrf');
      const op = operationOf(
        (await post('/licenses/bulk', [['action', 'extend'], ['days', '3'], ...ids([lic])]).expect(303)).headers.location,
      );
      const extended = await expiry(lic.id);
      await post(`/licenses/bulk/${op}/undo`, [], 'forged').expect(403);
      await agent.post(`/licenses/bulk/${op}/undo`).type('form').send('').expect(403);
      expect(await expiry(lic.id)).toEqual(extended);
      for (const bad of ['999999999', 'abc', '1%27%20OR%201=1', '99999999999999999999999']) {
        const res = await post(`/licenses/bulk/${bad}/undo`, []).expect(404);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        await agent.get(`/licenses/bulk/${bad}/undo`).expect(404);
      }
      await t.http().post(`/licenses/bulk/${op}/undo`).type('form').send('').expect(303).expect('Location', '/login');
      expect((await t.sql('SELECT count(*)::int AS n FROM license_bulk_operations WHERE undo_of = $1', [op]))[0].n).toBe(0);
    });

    it('undo: a viewer, and support staff limited to another product, cannot undo (403) nor see the undo page', async () => {
      const password = 'staff-password-123';
      const pos = await createLicense(t, { customer_name: 'Bulk Undo Other Product', product_code: 'POS_RETAIL' });
      const op = operationOf(
        (await post('/licenses/bulk', [['action', 'extend'], ['days', '3'], ...ids([pos])]).expect(303)).headers.location,
      );
      const extended = await expiry(pos.id);
      await t.app.get(UsersService).setPassword('bulk-viewer', password, 'viewer');
      await t.app.get(UsersService).setPassword('bulk-erp', password, 'support');
      await t.sql(
        `UPDATE users SET product_ids = (SELECT array_agg(id) FROM products WHERE code = 'ERP_SUITE') WHERE username = 'bulk-erp'`,
      );
      for (const username of ['bulk-viewer', 'bulk-erp']) {
        const session = await loggedInAgent(t, { username, password });
        const token = await session.token('/licenses');
        await postFields(session.agent, token, `/licenses/bulk/${op}/undo`, []).expect(403);
        await session.agent.get(`/licenses/bulk/${op}/undo`).expect(403);
      }
      expect(await expiry(pos.id)).toEqual(extended);
      expect((await t.sql('SELECT count(*)::int AS n FROM license_bulk_operations WHERE undo_of = $1', [op]))[0].n).toBe(0);
    });

    it('without a session every bulk route goes to the login page', async () => {
      for (const url of ['/licenses/bulk', '/licenses/bulk/1', '/licenses/bulk/1/progress', '/licenses/bulk/1/undo'])
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
