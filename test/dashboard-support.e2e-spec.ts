import { latestRefusalsStatement } from '../src/audit/audit.repository';
import { StaffRole } from '../src/staff/roles';
import { UsersService } from '../src/staff/users.service';
import { Agent, csrfFrom, flashOf, loggedInAgent, unescape } from './dashboard-helpers';
import { createLicense, fingerprint } from './support/factories';
import { watchRoundTrips } from './support/round-trips';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/**
 * The licence page for the ticket "my key stopped working on my new laptop" (docs/dashboard.md, Tasks): the machines
 * and the client's recent events first, a banner naming the refused machine with a prefilled release, the signed
 * preview folded away.
 */
describe('dashboard: the support-first licence page', () => {
  let t: TestApp;
  let agent: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    agent = (await loggedInAgent(t)).agent;
  }, 60_000);
  afterAll(() => t.close());

  const activate = (license_key: string, machine: string) =>
    t
      .http()
      .post('/api/v1/activate')
      .send({ license_key, machine_fingerprint: fingerprint(machine), hostname: machine });

  it('a refused new machine: a banner with its name and code, one click to the release of the oldest machine', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    await activate(lic.license_key, 'old-laptop').expect(200);
    expect((await agent.get(`/licenses/${lic.id}`).expect(200)).text).not.toContain('data-testid="refused-banner"');

    expect((await activate(lic.license_key, 'new-laptop').expect(400)).body.error.code).toBe('ALREADY_ACTIVATED');
    const page = await agent.get(`/licenses/${lic.id}`).expect(200);
    const banner = /data-testid="refused-banner">([\s\S]*?)<\/div>/.exec(page.text)?.[1] ?? '';
    expect(banner).toContain('<strong>new-laptop</strong>');
    expect(banner).toContain('ALREADY_ACTIVATED');
    const href = unescape(/href="([^"]+)" data-testid="refused-release"/.exec(banner)?.[1] ?? '');
    expect(href).toBe(`/licenses/${lic.id}/confirm/release?machine_fingerprint=${encodeURIComponent(fingerprint('old-laptop'))}`);
    expect(banner).toContain('Release old-laptop…');

    // The click: the release confirmation for that machine, ready to confirm.
    const confirm = await agent.get(href).expect(200);
    expect(confirm.text).toContain('old-laptop');

    // The machines and the client's events come before the licence's fields; the refusal is listed with its code.
    const order = ['data-testid="refused-banner"', 'id="seats-heading"', 'data-testid="client-events"', 'id="licence-heading"'].map((m) =>
      page.text.indexOf(m),
    );
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const events = /data-testid="client-events"[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? '';
    expect(events).toContain('ALREADY_ACTIVATED');
    // The signed preview is folded away.
    expect(page.text).toMatch(/<details data-testid="preview-details">\s*<summary><h2 id="preview-heading"/);
  });

  it('the banner stays for 7 days: no release link once a seat is free, and it says when the refused machine is bound', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    await activate(lic.license_key, 'first').expect(200);
    await activate(lic.license_key, 'second').expect(400);
    const bannerOf = async () =>
      /data-testid="refused-banner">([\s\S]*?)<\/div>/.exec((await agent.get(`/licenses/${lic.id}`).expect(200)).text)?.[1];
    expect(await bannerOf()).toContain('data-testid="refused-release"');
    await t.admin
      .post(`/api/v1/admin/licenses/${lic.id}/release`)
      .send({ machine_fingerprint: fingerprint('first') })
      .expect(200);
    const freed = await bannerOf();
    expect(freed).toContain('<strong>second</strong>');
    expect(freed).not.toContain('data-testid="refused-release"');
    await activate(lic.license_key, 'second').expect(200);
    const bound = await bannerOf();
    expect(bound).toContain('ALREADY_ACTIVATED');
    expect(bound).toContain('which is bound now');
    expect(bound).not.toContain('data-testid="refused-release"');
  });

  it('names the newest refusal of the last 7 days with its code, time and machine; an older one shows no banner', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    const refuse = (daysAgo: number, code: string, hostname: string) =>
      t.sql(
        `INSERT INTO audit_entries (created_at, action, actor_type, actor, ip, license_id, product_code, details)
         VALUES (now() - make_interval(days => $1::int), 'license.activation_denied', 'client', '203.0.113.9', '203.0.113.9', $2, 'POS_RETAIL',
                 jsonb_build_object('code', $3::text, 'hostname', $4::text, 'machine_fingerprint', $5::text))`,
        [daysAgo, lic.id, code, hostname, fingerprint(hostname)],
      );
    await refuse(8, 'KEY_SUSPENDED', 'too-old-pc');
    expect((await agent.get(`/licenses/${lic.id}`).expect(200)).text).not.toContain('data-testid="refused-banner"');
    await refuse(6, 'KEY_EXPIRED', 'six-days-pc');
    await refuse(3, 'KEY_REVOKED', 'three-days-pc');
    const page = (await agent.get(`/licenses/${lic.id}`).expect(200)).text;
    const banner = /data-testid="refused-banner">([\s\S]*?)<\/div>/.exec(page)?.[1] ?? '';
    expect(banner).toContain('KEY_REVOKED');
    expect(banner).toContain('the licence is revoked');
    expect(banner).toContain('<strong>three-days-pc</strong>');
    const [{ created_at }] = await t.sql<{ created_at: Date }>(
      `SELECT created_at FROM audit_entries WHERE license_id = $1 AND details->>'hostname' = 'three-days-pc'`,
      [lic.id],
    );
    expect(banner).toContain(`datetime="${created_at.toISOString()}"`);
    expect(banner).not.toContain('six-days-pc');
    expect(banner).not.toContain('data-testid="refused-release"');
    expect(unescape(banner)).toContain(`/audit?license_id=${lic.id}&action=license.activation_denied`);
  });

  it("the top events list the customer's own portal actions beside the client's", async () => {
    const lic = await createLicense(t, { customer_email: 'kasa@portal-events.example' });
    await activate(lic.license_key, 'till-1').expect(200);
    await t.sql(
      `INSERT INTO audit_entries (action, actor_type, actor, ip, license_id, product_code, details)
       VALUES ('license.deactivated', 'customer', 'kasa@portal-events.example', '198.51.100.7', $1, 'POS_RETAIL', '{"hostname":"till-1"}')`,
      [lic.id],
    );
    await t.admin.put(`/api/v1/admin/licenses/${lic.id}`).send({ notes: 'staff change, not a top event' }).expect(200);
    const page = (await agent.get(`/licenses/${lic.id}`).expect(200)).text;
    const events = /data-testid="client-events"[\s\S]*?<\/section>/.exec(page)?.[0] ?? '';
    expect(events.match(/data-testid="audit-row"/g)).toHaveLength(2);
    expect(events).toContain('kasa@portal-events.example');
    expect(events).toContain('license.deactivated');
    expect(events).toContain('license.activated');
    expect(events).not.toContain('license.updated');
  });

  it('attacker: a hostile hostname in the refusal is escaped in the banner', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    await activate(lic.license_key, 'bound').expect(200);
    await activate(lic.license_key, '<img src=x onerror=alert(1)>').expect(400);
    const page = await agent.get(`/licenses/${lic.id}`).expect(200);
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('data-testid="refused-banner"');
  });
  describe('refusals as an inbox: the filter, the order, the refusals page (docs/dashboard.md, Refused recently)', () => {
    const EMAIL = 'inbox.kupac@example.com';
    let older: { id: number; license_key: string };
    let middle: { id: number; license_key: string };
    let newest: { id: number; license_key: string };
    let never: { id: number; license_key: string };
    let stale: { id: number; license_key: string };
    const HOUR = 3_600_000;

    /** A licence of one seat refused once, the refusal moved `ago` ms into the past. */
    const refusedLicense = async (product_code: string, seed: string, ago: number) => {
      const lic = await createLicense(t, {
        product_code,
        customer_name: 'Inbox Kupac',
        customer_email: EMAIL,
        limits: { max_installations: 1 },
      });
      await activate(lic.license_key, `${seed}-a`).expect(200);
      // The log is append-only: the refusal is written as the server writes one, with its time in the past.
      await t.sql(
        `INSERT INTO audit_entries (created_at, action, actor_type, actor, ip, license_id, product_code, details)
         VALUES (now() - make_interval(secs => $2), 'license.activation_denied', 'client', '203.0.113.9', '203.0.113.9', $1, $3,
                 jsonb_build_object('code', 'ALREADY_ACTIVATED', 'hostname', $4::text, 'machine_fingerprint', $5::text))`,
        [lic.id, ago / 1000, product_code, `host-${seed}-b`, fingerprint(`${seed}-b`)],
      );
      return lic;
    };
    const keysIn = (html: string, keys: string[]) => keys.filter((k) => html.includes(k)).sort((a, b) => html.indexOf(a) - html.indexOf(b));

    beforeAll(async () => {
      // Created oldest refusal last, so creation order and refusal order differ.
      newest = await refusedLicense('POS_RETAIL', 'inbox-new', 1 * HOUR);
      middle = await refusedLicense('ERP_SUITE', 'inbox-mid', 26 * HOUR);
      older = await refusedLicense('POS_RETAIL', 'inbox-old', 4 * 24 * HOUR);
      stale = await refusedLicense('POS_RETAIL', 'inbox-stale', 8 * 24 * HOUR);
      never = await createLicense(t, { product_code: 'POS_RETAIL', customer_name: 'Inbox Kupac', customer_email: EMAIL });
    });

    const all = () => [older, middle, newest, never, stale].map((l) => l.license_key);

    it('the list filters to the licences refused in the last 7 days, newest refusal first, and another sort still applies', async () => {
      const page = (await agent.get(`/licenses?${new URLSearchParams({ q: 'Inbox Kupac', refused: '7' }).toString()}`).expect(200)).text;
      expect(keysIn(page, all())).toEqual([newest, middle, older].map((l) => l.license_key));
      expect(page).toContain('newest refusal first');
      expect(page).toMatch(/name="refused" value="7" checked/);
      const byKey = (
        await agent
          .get(`/licenses?${new URLSearchParams({ q: 'Inbox Kupac', refused: '7', sort: 'license_key', dir: 'asc' }).toString()}`)
          .expect(200)
      ).text;
      expect(keysIn(byKey, all())).toEqual([newest, middle, older].map((l) => l.license_key).sort());
      // Without the filter every licence of the search is listed; a forged value is not the filter.
      const plain = (await agent.get(`/licenses?${new URLSearchParams({ q: 'Inbox Kupac', refused: 'yes' }).toString()}`).expect(200)).text;
      expect(keysIn(plain, all()).sort()).toEqual(all().sort());
      // sort=refused alone turns the filter on (a bookmark of the order).
      const sorted = (await agent.get(`/licenses?${new URLSearchParams({ q: 'Inbox Kupac', sort: 'refused' }).toString()}`).expect(200))
        .text;
      expect(keysIn(sorted, all())).toEqual([newest, middle, older].map((l) => l.license_key));
    });

    it('the customer page filters and orders the same way, and its two pagination landmarks have different names', async () => {
      const url = `/licenses/customer?${new URLSearchParams({ email: EMAIL }).toString()}`;
      const every = (await agent.get(url).expect(200)).text;
      expect(keysIn(every, [never.license_key])).toEqual([never.license_key]);
      expect(every).toContain('aria-label="Licence pages"');
      expect(every).toContain('aria-label="Activity pages"');
      const refused = (await agent.get(`${url}&refused=7`).expect(200)).text;
      const licences = /id="customer-licenses"[\s\S]*?<\/section>/.exec(refused)?.[0] ?? '';
      expect(keysIn(licences, all())).toEqual([newest, middle, older].map((l) => l.license_key));
    });

    it('the refusals page lists newest first with code, reason and machine, per product with counts', async () => {
      const page = (await agent.get('/licenses/refused').expect(200)).text;
      expect(keysIn(page, all())).toEqual([newest, middle, older].map((l) => l.license_key));
      const row = new RegExp(`data-testid="refused-row" data-license="${newest.id}">([\\s\\S]*?)</tr>`).exec(page)?.[1] ?? '';
      expect(row).toContain('ALREADY_ACTIVATED');
      expect(row).toContain('every seat was taken');
      expect(row).toContain('host-inbox-new-b');
      expect(page).toMatch(/ERP_SUITE \(\d+\)/);
      const erp = (await agent.get('/licenses/refused?product=ERP_SUITE').expect(200)).text;
      expect(keysIn(erp, all())).toEqual([middle.license_key]);
      // An unknown product is every product, not an error.
      expect(keysIn((await agent.get('/licenses/refused?product=NOPE').expect(200)).text, all())).toHaveLength(3);
    });

    it('"all matching" of a refused view changes exactly the refused licences', async () => {
      const token = csrfFrom((await agent.get('/licenses').expect(200)).text);
      const confirm = await agent
        .post('/licenses/bulk/confirm')
        .type('form')
        .send(
          new URLSearchParams([
            ['_csrf', token],
            ['scope', 'all'],
            ['action', 'renew'],
            ['q', 'Inbox Kupac'],
            ['refused', '7'],
          ]).toString(),
        )
        .expect(200);
      expect(confirm.text).toContain('<strong>3</strong> now');
    });

    it('every role may read them; an account limited to products sees only its products', async () => {
      const add = async (username: string, role: StaffRole, products: string[] | null) => {
        await t.app.get(UsersService).setPassword(username, 'staff-password-123', role);
        if (products)
          await t.sql(
            `UPDATE users SET product_ids = (SELECT array_agg(id ORDER BY id) FROM products WHERE code = ANY($2)) WHERE username = $1`,
            [username, products],
          );
        return (await loggedInAgent(t, { username, password: 'staff-password-123' })).agent;
      };
      const viewer = await add('inbox-viewer', 'viewer', null);
      expect(keysIn((await viewer.get('/licenses/refused').expect(200)).text, all())).toHaveLength(3);
      const erpOnly = await add('inbox-erp', 'support', ['ERP_SUITE']);
      expect(keysIn((await erpOnly.get('/licenses/refused').expect(200)).text, all())).toEqual([middle.license_key]);
      expect(
        keysIn((await erpOnly.get(`/licenses?${new URLSearchParams({ refused: '7', q: 'Inbox' }).toString()}`).expect(200)).text, all()),
      ).toEqual([middle.license_key]);
      const customer = (
        await erpOnly.get(`/licenses/customer?${new URLSearchParams({ email: EMAIL, refused: '7' }).toString()}`).expect(200)
      ).text;
      expect(keysIn(customer, all())).toEqual([middle.license_key]);
      // A product-limited account may not start bulk changes, so the palette's last undo is refused too.
      await erpOnly.get('/licenses/bulk/last/undo').expect(403);
      await viewer.get('/licenses/bulk/last/undo').expect(403);
    });

    it('no "Release all…" without a machine bound, and its confirmation is a 404 page', async () => {
      const page = (await agent.get(`/licenses/${never.id}`).expect(200)).text;
      expect(page).not.toContain('confirm/release-all');
      await agent.get(`/licenses/${never.id}/confirm/release-all`).expect(404);
      expect((await agent.get(`/licenses/${older.id}`).expect(200)).text).toContain('confirm/release-all');
    });

    it('the last bulk change to undo: its confirmation, or a message when there is none', async () => {
      const none = await agent.get('/licenses/bulk/last/undo');
      if (none.status === 303 && none.headers.location === '/licenses/bulk') {
        expect(await flashOf(agent, '/licenses/bulk')).toEqual(['error', 'No recent bulk change can be undone.']);
      }
      const token = csrfFrom((await agent.get('/licenses').expect(200)).text);
      await agent
        .post('/licenses/bulk')
        .type('form')
        .send(
          new URLSearchParams([
            ['_csrf', token],
            ['scope', 'selected'],
            ['ids', String(never.id)],
            ['action', 'extend'],
            ['days', '5'],
          ]).toString(),
        )
        .expect(303);
      const last = await agent.get('/licenses/bulk/last/undo').expect(303);
      expect(last.headers.location).toMatch(/^\/licenses\/bulk\/\d+\/undo$/);
      expect((await agent.get(last.headers.location).expect(200)).text).toContain('data-testid="bulk-undo-confirm" data-main autofocus');
    });
  });

  describe('refused recently (docs/dashboard.md, Refused recently)', () => {
    const email = 'procurement.department.with.a.very.long.local.part@example-company-international.com';
    let recent: { id: number; license_key: string };
    let old: { id: number; license_key: string };
    let never: { id: number; license_key: string };
    const refuseAt = (id: number, daysAgo: number, code: string) =>
      t.sql(
        `INSERT INTO audit_entries (created_at, action, actor_type, actor, ip, license_id, product_code, details)
         VALUES (now() - make_interval(days => $1::int), 'license.activation_denied', 'client', '203.0.113.5', '203.0.113.5', $2, 'POS_RETAIL',
                 jsonb_build_object('code', $3::text, 'hostname', 'marker-pc'))`,
        [daysAgo, id, code],
      );
    beforeAll(async () => {
      [recent, old, never] = await Promise.all(
        ['Refusal Marker One', 'Refusal Marker Two', 'Refusal Marker Three'].map((name) =>
          createLicense(t, { customer_name: name, customer_email: email }),
        ),
      );
      await refuseAt(recent.id, 2, 'ALREADY_ACTIVATED');
      await refuseAt(old.id, 9, 'KEY_EXPIRED');
    });
    /** Each row's (or suggestion's) key, and the marker it carries, if any. */
    const markers = (html: string, row: string) =>
      Object.fromEntries(
        html
          .split(`data-testid="${row}"`)
          .slice(1)
          // Only the row itself: what follows the last row (the customer's activity) names licence keys too.
          .map((rest) => rest.slice(0, rest.search(/<\/tr>|<\/li>/)))
          .map((part) => {
            const key = [recent, old, never].find((l) => part.includes(l.license_key))?.license_key ?? '?';
            const mark = /data-testid="refused-recently"[^>]*>([\s\S]*?)<\/span><\/span>/.exec(part)?.[1];
            return [key, mark ? unescape(mark.replace(/<[^>]+>/g, '')).trim() : null];
          }),
      );

    it.each([
      ['the licence list', '/licenses?q=Refusal%20Marker', 'license-row'],
      ['the search suggestions', '/licenses/search/suggest?q=Refusal%20Marker', 'suggestion'],
      ['the customer page', `/licenses/customer?email=${encodeURIComponent(email)}`, 'license-row'],
    ])('%s marks a licence refused in the last 7 days, with the code; older or no refusals carry no mark', async (_where, url, row) => {
      const found = markers((await agent.get(url).expect(200)).text, row);
      expect(Object.keys(found).sort()).toEqual([recent, old, never].map((l) => l.license_key).sort());
      expect(found[recent.license_key]).toMatch(/^Refused .+: ALREADY_ACTIVATED$/);
      expect(found[old.license_key]).toBeNull();
      expect(found[never.license_key]).toBeNull();
    });

    it('reads the refusals of a whole list page in one statement', async () => {
      // Every statement the app's pool sends while the page is served (the repositories' prepared statements included).
      const { statements } = await watchRoundTrips(t)(() => agent.get('/licenses?size=100').expect(200), 1);
      const refusalReads = statements.filter((sql) => sql.includes("'license.activation_denied'"));
      expect(refusalReads).toHaveLength(1);
    });

    it('the statement reads the audit log through its indexes, never a whole-table scan', async () => {
      // A log of some size, so the planner's choice is the one a real server makes.
      await t.sql(
        `INSERT INTO audit_entries (created_at, action, actor_type, actor, license_id, details)
         SELECT now() - make_interval(secs => g * 60), CASE WHEN g % 10 = 0 THEN 'license.activation_denied' ELSE 'license.activated' END,
                'client', '203.0.113.1', 100000 + g % 500, '{"code":"ALREADY_ACTIVATED"}'
         FROM generate_series(1, 30000) g`,
      );
      await t.sql('ANALYZE audit_entries');
      const ids = Array.from({ length: 25 }, (_, i) => 100000 + i * 7);
      const refusals = latestRefusalsStatement(ids, new Date(Date.now() - 7 * 86_400_000)).compile();
      const [{ 'QUERY PLAN': plan }] = await t.sql<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${refusals.text}`, refusals.values);
      const nodes: { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string }[] = [];
      const walk = (node: Record<string, unknown>) => {
        nodes.push(node as (typeof nodes)[number]);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk((plan as { Plan: Record<string, unknown> }[])[0].Plan);
      const onAudit = nodes.filter((n) => n['Relation Name'] === 'audit_entries');
      expect(onAudit.map((n) => n['Node Type'])).not.toContain('Seq Scan');
      // An index scan names its index; a bitmap heap scan's child (the bitmap index scan) does.
      expect(nodes.map((n) => n['Index Name'])).toEqual(expect.arrayContaining(['audit_entries_license_idx']));
      const rows = await t.sql<{ license_id: number }>(refusals.text, refusals.values);
      expect(rows.map((r) => r.license_id).sort((a, b) => a - b)).toEqual(ids.filter((id) => id % 10 === 0));
    });
  });
});
