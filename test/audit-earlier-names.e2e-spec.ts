import type { Server } from 'node:http';
import request from 'supertest';
import { csrfFrom, loggedInAgent } from './dashboard-helpers';
import { createTestApp, TestApp } from './support/test-app';

interface Entry {
  action: string;
  actor: string | null;
}

/**
 * Staff sign-ins were audited as `auth.login` / `auth.login_failed` and are `staff.signed_in` / `staff.sign_in_failed`
 * now (docs/licences.md, Audit log): a filter on the earlier name still finds them, so a SIEM rule written for it keeps
 * seeing staff sign-ins. Customers' portal sign-ins are still `auth.login`.
 */
describe('the audit filter under the earlier names of staff sign-ins', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await loggedInAgent(t);
    const agent = request.agent(t.app.getHttpServer() as Server);
    const token = csrfFrom((await agent.get('/login').expect(200)).text);
    await agent.post('/login').type('form').send({ username: 'admin', password: 'wrong-password', _csrf: token }).expect(401);
    // A customer's portal sign-in, which keeps the name auth.login.
    await t.sql(
      `INSERT INTO audit_entries (action, actor_type, actor, details) VALUES ('auth.login', 'customer', 'ana@example.com', '{"portal": true}')`,
    );
  }, 60_000);
  afterAll(() => t?.close(), 60_000);

  const audit = async (action: string): Promise<Entry[]> =>
    (await t.admin.get(`/api/v1/admin/audit?action=${action}&limit=100`).expect(200)).body as Entry[];

  it('action=auth.login answers the staff sign-ins (staff.signed_in) and the portal sign-ins (auth.login)', async () => {
    const entries = await audit('auth.login');
    expect(new Set(entries.map((e) => e.action))).toEqual(new Set(['auth.login', 'staff.signed_in']));
    expect(entries).toContainEqual(expect.objectContaining({ action: 'staff.signed_in', actor: 'staff:admin' }));
    expect(entries).toContainEqual(expect.objectContaining({ action: 'auth.login', actor: 'ana@example.com' }));
  });

  it('action=auth.login_failed answers the refused staff sign-ins (staff.sign_in_failed) and nothing else', async () => {
    const entries = await audit('auth.login_failed');
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.action === 'staff.sign_in_failed')).toBe(true);
  });

  it('the current names match only themselves, and the CSV export filters the same way', async () => {
    expect(new Set((await audit('staff.signed_in')).map((e) => e.action))).toEqual(new Set(['staff.signed_in']));
    expect(new Set((await audit('staff.sign_in_failed')).map((e) => e.action))).toEqual(new Set(['staff.sign_in_failed']));
    const csv = (await t.admin.get('/api/v1/admin/audit/export?action=auth.login_failed&format=csv').expect(200)).text;
    expect(csv).toContain('staff.sign_in_failed');
    expect(csv).not.toContain('staff.signed_in');
  });
});
