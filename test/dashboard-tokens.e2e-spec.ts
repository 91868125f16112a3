import { parse } from 'csv-parse/sync';
import { Agent, loggedInAgent, postForm, unescape } from './dashboard-helpers';
import { createLicense } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

describe('dashboard: tokens page and CSV exports', () => {
  let t: TestApp;
  let agent: Agent;
  let csrf: string;

  beforeAll(async () => {
    t = await createTestApp();
    const session = await loggedInAgent(t);
    agent = session.agent;
    csrf = await session.token('/tokens');
  }, 60_000);
  afterAll(() => t.close());

  it('redirects to /login without a session', async () => {
    await t.http().get('/tokens').expect(302).expect('Location', '/login');
    await t.http().get('/licenses/export.csv').expect(302).expect('Location', '/login');
    await t.http().get('/audit/export.csv').expect(302).expect('Location', '/login');
  });

  it('creates a token and shows it once with a copy button; the list never shows it again', async () => {
    const page = await agent.get('/tokens').expect(200);
    expect(page.text).toContain('aria-current="page">Tokens</a>');
    const res = await postForm(agent, csrf, '/tokens', {
      name: 'finance export',
      scopes: ['licenses:read', 'audit:read'],
      products: ['POS_RETAIL'],
      expires_on: '2099-12-31',
    }).expect(201);
    const token = /id="new-token"[^>]*value="(lst_[A-Za-z0-9_-]{43})"/.exec(res.text)?.[1];
    expect(token).toBeDefined();
    expect(res.text).toContain('data-copy-button');
    expect(res.text).toContain('class="flash flash-success" role="status">Token finance export created');
    const [row] = await t.sql<{ scopes: string[]; products: string[]; expires_at: Date }>(
      `SELECT scopes, ARRAY(SELECT p.code FROM products p WHERE p.id = ANY(t.product_ids)) AS products, expires_at
       FROM admin_tokens t WHERE name = 'finance export'`,
    );
    expect(row).toEqual({
      scopes: ['licenses:read', 'audit:read'],
      products: ['POS_RETAIL'],
      expires_at: new Date('2099-12-31T23:59:59Z'),
    });
    await t.http().get('/api/v1/admin/licenses').set('Authorization', `Bearer ${token}`).expect(200);
    const later = await agent.get('/tokens').expect(200);
    expect(later.text).toContain('finance export');
    expect(later.text).not.toContain(token);
    const [audit] = await t.sql<{ actor_type: string; actor: string }>(
      `SELECT actor_type, actor FROM audit_entries WHERE action = 'token.created' ORDER BY id DESC LIMIT 1`,
    );
    expect(audit).toEqual({ actor_type: 'dashboard', actor: 'staff:admin' });
  });

  it('re-renders the form with messages and the typed values when invalid, and refuses a missing CSRF token', async () => {
    const res = await postForm(agent, csrf, '/tokens', {
      name: 'no scopes <b>',
      expires_on: '2001-01-01',
      products: ['POS_RETAIL'],
    }).expect(400);
    expect(res.text).toContain('value="no scopes &lt;b&gt;"');
    expect(res.text).toContain('name="products" value="POS_RETAIL" checked');
    // A summary linking to each field and each message beside its field (docs/dashboard.md, Forms).
    const summary = /data-error-summary[\s\S]*?<\/ul>/.exec(res.text)![0];
    expect(summary).toContain('<a href="#field-scopes">Tick at least one scope</a>');
    expect(summary).toMatch(/<a href="#field-name">Name must be 1-100 letters/);
    expect(res.text).toMatch(/<div class="field-error" id="field-scopes-error">Tick at least one scope/);
    expect(res.text).toMatch(/<div class="field-error" id="field-name-error">Name must be/);
    expect(res.text).toMatch(/id="field-name"[^>]*aria-describedby="field-name-hint field-name-error"[^>]*aria-invalid="true"/);
    // The service's refusals land on their field too (docs/dashboard.md, Forms; docs/admin-api.md, Global scopes).
    const global = await postForm(agent, csrf, '/tokens', {
      name: 'pos keys',
      scopes: 'signing-keys:manage',
      products: 'POS_RETAIL',
    }).expect(400);
    expect(global.text).toMatch(/<div class="field-error" id="field-scopes-error">[^<]*signing-keys:manage/);
    expect(global.text).toContain('<a href="#field-scopes">');
    // A past expiry date is reported at its field (docs/dashboard.md, Forms).
    const past = await postForm(agent, csrf, '/tokens', { name: 'old', scopes: 'stats:read', expires_on: '2001-01-01' }).expect(400);
    expect(past.text).toMatch(/<div class="field-error" id="field-expires_at-error">/);
    await agent.post('/tokens').type('form').send({ name: 'x', scopes: 'stats:read' }).expect(403);
    expect(await t.sql(`SELECT 1 FROM admin_tokens WHERE name IN ('x', 'no scopes <b>', 'pos keys', 'old')`)).toEqual([]);
  });

  it('revokes only after the confirmation', async () => {
    const created = await postForm(agent, csrf, '/tokens', { name: 'to revoke', scopes: 'stats:read' }).expect(201);
    const token = /value="(lst_[^"]+)"/.exec(created.text)![1];
    const [{ id }] = await t.sql<{ id: number }>(`SELECT id FROM admin_tokens WHERE name = 'to revoke'`);
    await postForm(agent, csrf, `/tokens/${id}/revoke`).expect(303).expect('Location', '/tokens');
    await t.http().get('/api/v1/admin/stats').set('X-API-Key', token).expect(200);
    await postForm(agent, csrf, `/tokens/${id}/revoke`, { confirm: 'yes' }).expect(303);
    await t.http().get('/api/v1/admin/stats').set('X-API-Key', token).expect(401);
    expect((await agent.get('/tokens').expect(200)).text).toContain('Token to revoke revoked');
  });

  it('"Export CSV" on the licence list carries the filters shown and downloads those licences', async () => {
    await createLicense(t, { product_code: 'ERP_SUITE', customer_name: 'Exported ERP' });
    await createLicense(t, { product_code: 'POS_RETAIL', customer_name: 'Not exported' });
    const page = await agent.get('/licenses?product=ERP_SUITE&status=active').expect(200);
    const href = unescape(/href="([^"]+)" data-testid="export-csv"/.exec(page.text)![1]);
    expect(href).toBe('/licenses/export.csv?product=ERP_SUITE&status=active');
    const res = await agent.get(href).expect(200);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="licenses-.*\.csv"$/);
    const rows = parse<{ product_code: string; customer_name: string }>(res.text, { columns: true });
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.product_code))).toEqual(new Set(['ERP_SUITE']));
  });

  it('"Export CSV" on the audit log carries the filters shown', async () => {
    const page = await agent.get('/audit?action=token.created&from=2000-01-01').expect(200);
    const href = unescape(/href="([^"]+)" data-testid="export-csv"/.exec(page.text)![1]);
    expect(href).toBe('/audit/export.csv?action=token.created&from=2000-01-01');
    const res = await agent.get(href).expect(200);
    const rows = parse<{ action: string }>(res.text, { columns: true });
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(new Set(rows.map((r) => r.action))).toEqual(new Set(['token.created']));
  });
});
