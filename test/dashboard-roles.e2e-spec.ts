import { ExecutionContext, Get } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { METHOD_METADATA } from '@nestjs/common/constants';
import type { Server } from 'node:http';
import request from 'supertest';
import { isDashboardPath } from '../src/dashboard/dashboard.setup';
import { DASHBOARD_CONTROLLER, DashboardController } from '../src/dashboard/http/dashboard-controller.decorator';
import { RoleGuard } from '../src/dashboard/http/role.guard';
import { PRODUCT_SCOPED_ROUTES, ROUTE_RULES, routeKeys } from '../src/dashboard/http/route-rules';
import type { StaffRole } from '../src/staff/roles';
import { UsersService } from '../src/staff/users.service';
import { ADMIN, csrfFrom, loggedInAgent, postForm } from './dashboard-helpers';
import { createLicense } from './support/factories';
import { createSecondInstance, createTestApp, type TestApp } from './support/test-app';

jest.setTimeout(60_000);

const PASSWORD = 'staff-password-123';

/** Every handler of every dashboard controller Nest registered, with its `METHOD /path` keys. */
function dashboardRoutes(t: TestApp): { handler: string; keys: string[] }[] {
  const routes: { handler: string; keys: string[] }[] = [];
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => object) | null;
      if (!controller || Reflect.getMetadata(DASHBOARD_CONTROLLER, controller) !== true) continue;
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
        routes.push({ handler: `${controller.name}.${name}`, keys: routeKeys(controller, handler) });
      }
    }
  }
  return routes;
}

/** docs/dashboard.md, Staff and roles: the route table, the role guard, hidden controls, product limits and invitations. */
describe('dashboard staff roles', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<typeof loggedInAgent>>;
  let pos: number;
  let erp: number;

  const addAccount = async (username: string, role: StaffRole, products: string[] | null = null) => {
    await t.app.get(UsersService).setPassword(username, PASSWORD, role);
    if (products) {
      await t.sql(
        `UPDATE users SET product_ids = (SELECT array_agg(id ORDER BY id) FROM products WHERE code = ANY($2)) WHERE username = $1`,
        [username, products],
      );
    }
    const session = await loggedInAgent(t, { username, password: PASSWORD });
    return { ...session, csrf: await session.token('/licenses') };
  };
  const licence = async (id: number) =>
    (await t.sql<{ revoked: boolean; active: boolean }>('SELECT revoked, active FROM licenses WHERE id = $1', [id]))[0];
  const idOf = async (username: string) => (await t.sql<{ id: number }>('SELECT id FROM users WHERE username = $1', [username]))[0].id;
  const audit = (action: string) =>
    t.sql<{ actor: string; actor_type: string; details: Record<string, unknown> }>(
      'SELECT actor, actor_type, details FROM audit_entries WHERE action = $1 ORDER BY id',
      [action],
    );

  beforeAll(async () => {
    t = await createTestApp();
    owner = await loggedInAgent(t);
    pos = (await createLicense(t, { product_code: 'POS_RETAIL' })).id;
    erp = (await createLicense(t, { product_code: 'ERP_SUITE' })).id;
  }, 60_000);
  afterAll(() => t.close());

  describe('the route table', () => {
    it('has a rule for every dashboard route Nest registered, and no rule for a route that does not exist', () => {
      const routes = dashboardRoutes(t);
      expect(routes.length).toBeGreaterThan(70);
      // Each one is under a path that gets the session (else every request would look signed out).
      const outside = routes.flatMap((r) => r.keys).filter((key) => !isDashboardPath(key.split(' ')[1].replace(/:\w+|\*\w+/g, 'x')));
      expect(outside).toEqual([]);
      const missing = routes.filter((r) => !r.keys.length || r.keys.some((key) => ROUTE_RULES[key] === undefined));
      expect(missing).toEqual([]);
      const registered = new Set(routes.flatMap((r) => r.keys));
      expect(Object.keys(ROUTE_RULES).filter((key) => !registered.has(key))).toEqual([]);
      expect([...PRODUCT_SCOPED_ROUTES].filter((key) => !registered.has(key))).toEqual([]);
    });

    it('refuses a route that has no rule (a new page cannot ship open)', () => {
      @DashboardController('unruled')
      class UnruledController {
        @Get()
        page(this: void) {
          return 'open';
        }
      }
      const req = { user: { id: 1, username: 'admin', role: 'owner', productIds: null } };
      const context = {
        getClass: () => UnruledController,
        getHandler: () => UnruledController.prototype.page,
        switchToHttp: () => ({ getRequest: () => req }),
      } as unknown as ExecutionContext;
      expect(() => new RoleGuard().canActivate(context)).toThrow('This page has no access rule yet.');
    });
  });

  describe('what each role may do', () => {
    it('a viewer sees no revoke, edit or new-licence control, and gets a 403 page when posting them anyway', async () => {
      const viewer = await addAccount('vera', 'viewer');
      const page = (await viewer.agent.get(`/licenses/${pos}`).expect(200)).text;
      expect(page).not.toContain(`/licenses/${pos}/confirm/revoke`);
      expect(page).not.toContain(`/licenses/${pos}/edit`);
      expect(page).not.toContain('href="/licenses/new"');
      const revoke = await postForm(viewer.agent, viewer.csrf, `/licenses/${pos}/revoke`, { reason: 'not mine to do' }).expect(403);
      expect(revoke.headers['content-type']).toMatch(/text\/html/);
      expect(revoke.text).toContain('Your role (viewer) cannot do this');
      expect((await licence(pos)).revoked).toBe(false);
      await viewer.agent.get('/licenses/new').expect(403);
      const before = (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM licenses'))[0].n;
      await postForm(viewer.agent, viewer.csrf, '/licenses', {
        product_code: 'POS_RETAIL',
        license_type: 'YEARLY',
        customer_name: 'Nope',
      }).expect(403);
      expect((await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM licenses'))[0].n).toBe(before);
      await postForm(viewer.agent, viewer.csrf, `/licenses/${pos}/suspend`).expect(403);
      expect((await licence(pos)).active).toBe(true);
      // Reading stays open: the list, the audit log, statistics.
      await viewer.agent.get('/licenses').expect(200);
      await viewer.agent.get('/audit').expect(200);
      await viewer.agent.get('/dashboard').expect(200);
    });

    it('a support account changes licences but is refused revoke (403) and sees no revoke control', async () => {
      const support = await addAccount('sam', 'support');
      const page = (await support.agent.get(`/licenses/${pos}`).expect(200)).text;
      expect(page).toContain(`/licenses/${pos}/confirm/suspend`);
      expect(page).not.toContain(`/licenses/${pos}/confirm/revoke`);
      await postForm(support.agent, support.csrf, `/licenses/${pos}/revoke`, { reason: 'support tried' }).expect(403);
      expect((await licence(pos)).revoked).toBe(false);
      await postForm(support.agent, support.csrf, `/licenses/${pos}/suspend`).expect(303);
      expect((await licence(pos)).active).toBe(false);
      await postForm(support.agent, support.csrf, `/licenses/${pos}/reinstate`).expect(303);
      expect((await audit('license.updated')).at(-1)).toMatchObject({ actor: 'staff:sam', actor_type: 'dashboard' });
      await support.agent.get('/tokens').expect(403);
      await support.agent.get('/signing-keys').expect(403);
    });

    it('an admin revokes and manages tokens but cannot manage staff (no Staff link, 403 on its pages and actions)', async () => {
      const admin = await addAccount('adam', 'admin');
      const nav = (await admin.agent.get('/dashboard').expect(200)).text;
      expect(nav).toContain('href="/tokens"');
      expect(nav).not.toContain('href="/staff"');
      await admin.agent.get('/staff').expect(403);
      await postForm(admin.agent, admin.csrf, '/staff/invites', { username: 'eve', email: 'eve@example.com', role: 'owner' }).expect(403);
      await postForm(admin.agent, admin.csrf, `/staff/${await idOf('adam')}/access`, { role: 'owner' }).expect(403);
      expect((await t.sql<{ role: string }>(`SELECT role FROM users WHERE username = 'adam'`))[0].role).toBe('admin');
      const victim = (await createLicense(t)).id;
      await postForm(admin.agent, admin.csrf, `/licenses/${victim}/revoke`, { reason: 'admin may' }).expect(303);
      expect((await licence(victim)).revoked).toBe(true);
    });

    it('the owner sees the Staff page', async () => {
      const page = (await owner.agent.get('/staff').expect(200)).text;
      expect(page).toContain('href="/staff"');
      expect(page).toContain('data-username="admin"');
    });
  });

  describe('accounts limited to products', () => {
    let limited: Awaited<ReturnType<typeof addAccount>>;
    beforeAll(async () => {
      limited = await addAccount('polly', 'support', ['POS_RETAIL']);
    }, 60_000);

    it('see and change only their products: another product’s licence is not found, and unchanged', async () => {
      const list = (await limited.agent.get('/licenses').expect(200)).text;
      expect(list).toContain(`href="/licenses/${pos}"`);
      expect(list).not.toContain(`href="/licenses/${erp}"`);
      await limited.agent.get(`/licenses/${erp}`).expect(404);
      await postForm(limited.agent, limited.csrf, `/licenses/${erp}/suspend`).expect(404);
      await postForm(limited.agent, limited.csrf, `/licenses/${erp}/renew`).expect(404);
      await postForm(limited.agent, limited.csrf, `/licenses/${erp}/release`).expect(404);
      expect((await licence(erp)).active).toBe(true);
      await limited.agent.get(`/licenses/${pos}`).expect(200);
    });

    it('cannot create a licence of another product', async () => {
      const before = (
        await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM licenses l JOIN products p ON p.id = l.product_id WHERE p.code = 'ERP_SUITE'`,
        )
      )[0].n;
      const res = await postForm(limited.agent, limited.csrf, '/licenses', {
        product_code: 'ERP_SUITE',
        license_type: 'YEARLY',
        customer_name: 'Sneaky',
      });
      expect(res.status).toBe(400);
      expect(
        (
          await t.sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM licenses l JOIN products p ON p.id = l.product_id WHERE p.code = 'ERP_SUITE'`,
          )
        )[0].n,
      ).toBe(before);
    });

    it('are refused the pages that cover every product: exports, bulk, mail, stores (search and customers: see dashboard-limited-accounts)', async () => {
      for (const path of ['/licenses/export.csv', '/audit/export.csv', '/licenses/bulk', '/emails', '/stores', '/products'])
        await limited.agent.get(path).expect(403);
      await postForm(limited.agent, limited.csrf, '/licenses/bulk/confirm', { action: 'export', scope: 'all' }).expect(403);
    });

    it('read only their products’ audit entries', async () => {
      const page = (await limited.agent.get('/audit').expect(200)).text;
      expect(page).toContain(`href="/licenses/${pos}"`);
      expect(page).not.toContain(`href="/licenses/${erp}"`);
    });

    it('attacker: the audit page’s product filter naming another product shows no entry; their own product’s still show', async () => {
      const rows = (html: string) => html.match(/data-testid="audit-row"/g)?.length ?? 0;
      const everything = (await owner.agent.get('/audit?product=ERP_SUITE').expect(200)).text;
      expect(everything).toContain(`href="/licenses/${erp}"`);
      for (const query of ['product=ERP_SUITE', `product=ERP_SUITE&license_id=${erp}`]) {
        const page = (await limited.agent.get(`/audit?${query}`).expect(200)).text;
        expect(rows(page)).toBe(0);
        expect(page).not.toContain(`href="/licenses/${erp}"`);
      }
      // The product list offers only their products.
      const own = (await limited.agent.get('/audit?product=POS_RETAIL').expect(200)).text;
      expect(own).toContain(`href="/licenses/${pos}"`);
      expect(own).not.toContain('value="ERP_SUITE"');
    });
  });

  describe('the last enabled owner', () => {
    it('cannot be demoted or disabled (409), and nothing changes', async () => {
      const csrf = await owner.token('/staff');
      const id = await idOf(ADMIN.username);
      await postForm(owner.agent, csrf, `/staff/${id}/access`, { role: 'admin' }).expect(409);
      await postForm(owner.agent, csrf, `/staff/${id}/disable`).expect(409);
      expect((await t.sql(`SELECT role, disabled FROM users WHERE id = $1`, [id]))[0]).toEqual({ role: 'owner', disabled: false });
      await owner.agent.get('/staff').expect(200);
    });
  });

  describe('sessions of a changed account end at once', () => {
    it('a role change ends the session (it signs in again with the new role)', async () => {
      const changed = await addAccount('carl', 'support');
      await changed.agent.get('/licenses').expect(200);
      await postForm(owner.agent, await owner.token('/staff'), `/staff/${await idOf('carl')}/access`, { role: 'viewer' }).expect(303);
      await changed.agent.get('/licenses').expect(302).expect('Location', '/login');
      expect((await audit('staff.role_changed')).at(-1)).toMatchObject({
        actor: 'staff:admin',
        actor_type: 'dashboard',
        details: { username: 'carl', from: { role: 'support', products: null }, to: { role: 'viewer', products: null } },
      });
    });

    it('disabling on one instance ends the session on another at once; the account cannot sign in until enabled', async () => {
      const second = await createSecondInstance(t);
      try {
        await t.app.get(UsersService).setPassword('dora', PASSWORD, 'support');
        const elsewhere = await loggedInAgent(second, { username: 'dora', password: PASSWORD });
        await elsewhere.agent.get('/licenses').expect(200);
        await postForm(owner.agent, await owner.token('/staff'), `/staff/${await idOf('dora')}/disable`).expect(303);
        await elsewhere.agent.get('/licenses').expect(302).expect('Location', '/login');
        const fresh = request.agent(second.app.getHttpServer() as Server);
        const form = csrfFrom((await fresh.get('/login').expect(200)).text);
        await fresh.post('/login').type('form').send({ username: 'dora', password: PASSWORD, _csrf: form }).expect(401);
        await postForm(owner.agent, await owner.token('/staff'), `/staff/${await idOf('dora')}/enable`).expect(303);
        await loggedInAgent(second, { username: 'dora', password: PASSWORD });
        expect((await audit('staff.disabled')).at(-1)).toMatchObject({ actor: 'staff:admin', details: { username: 'dora' } });
        expect((await audit('staff.enabled')).at(-1)).toMatchObject({ actor: 'staff:admin', details: { username: 'dora' } });
      } finally {
        await second.close();
      }
    });

    it('resetting second factors ends the sessions and is audited', async () => {
      const reset = await addAccount('rita', 'viewer');
      await postForm(owner.agent, await owner.token('/staff'), `/staff/${await idOf('rita')}/reset-second-factors`).expect(303);
      await reset.agent.get('/licenses').expect(302).expect('Location', '/login');
      expect((await audit('staff.second_factor_reset')).at(-1)).toMatchObject({ actor: 'staff:admin', details: { username: 'rita' } });
    });
  });

  describe('invitations', () => {
    const invite = async (fields: Record<string, string | string[]>, status: number) =>
      postForm(owner.agent, await owner.token('/staff'), '/staff/invites', fields).expect(status);
    const linkOf = (html: string) => /id="invite-url"[^>]*value="([^"]+)"/.exec(html)?.[1];

    it('an owner invites: the link is shown once and mailed as staff_invite, only its hash stored; accepting creates the account once', async () => {
      const sent = await invite({ username: 'nina', email: 'nina@example.com', role: 'support', products: ['POS_RETAIL'] }, 201);
      const url = linkOf(sent.text) as string;
      expect(url).toMatch(/\/staff\/invite\/[A-Za-z0-9_-]{43}$/);
      const token = url.split('/').at(-1) as string;
      const [stored] = await t.sql<{ token_hash: string; hours: number }>(
        `SELECT token_hash, round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours FROM staff_invites WHERE username = 'nina'`,
      );
      expect(stored.hours).toBe(72);
      expect(stored.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(
        JSON.stringify(await t.sql('SELECT * FROM staff_invites')) + JSON.stringify(await t.sql('SELECT data FROM mail_messages')),
      ).not.toContain(token);
      expect(await t.sql(`SELECT kind, to_address FROM mail_messages WHERE kind = 'staff_invite'`)).toEqual([
        { kind: 'staff_invite', to_address: 'nina@example.com' },
      ]);
      expect((await audit('staff.invited')).at(-1)).toMatchObject({
        actor: 'staff:admin',
        details: { username: 'nina', role: 'support', products: ['POS_RETAIL'] },
      });
      expect((await owner.agent.get('/staff').expect(200)).text).not.toContain(token);

      const visitor = request.agent(t.app.getHttpServer() as Server);
      const path = new URL(url).pathname;
      const acceptPage = await visitor.get(path).expect(200);
      expect(acceptPage.text).toContain('nina');
      const csrf = csrfFrom(acceptPage.text);
      const mismatch = await visitor
        .post(path)
        .type('form')
        .send({ password: 'a-good-password', password_repeat: 'another-one', _csrf: csrf })
        .expect(400);
      expect(mismatch.text).toContain('the two passwords differ');
      await visitor
        .post(path)
        .type('form')
        .send({ password: 'a-good-password', password_repeat: 'a-good-password', _csrf: csrf })
        .expect(303)
        // Accepting signs the new member in (docs/security.md, Invitations).
        .expect('Location', '/dashboard');
      await visitor.get(path).expect(404);
      await visitor
        .post(path)
        .type('form')
        .send({ password: 'x-good-password', password_repeat: 'x-good-password', _csrf: csrf })
        .expect(404);
      expect(await t.sql(`SELECT role, email, product_ids IS NOT NULL AS limited FROM users WHERE username = 'nina'`)).toEqual([
        { role: 'support', email: 'nina@example.com', limited: true },
      ]);
      expect((await audit('staff.joined')).at(-1)).toMatchObject({
        actor: 'staff:nina',
        details: { username: 'nina', role: 'support', invited_by: 'admin' },
      });
      await loggedInAgent(t, { username: 'nina', password: 'a-good-password' });
    });

    it('an expired or unknown link is a 404 page; bad fields come back with messages; a taken name is refused', async () => {
      const sent = await invite({ username: 'otto', email: 'otto@example.com', role: 'viewer' }, 201);
      const path = new URL(linkOf(sent.text) as string).pathname;
      await t.sql(`UPDATE staff_invites SET expires_at = now() - interval '1 second' WHERE username = 'otto'`);
      await request(t.app.getHttpServer() as Server)
        .get(path)
        .expect(404);
      await request(t.app.getHttpServer() as Server)
        .get('/staff/invite/not-a-token')
        .expect(404);
      expect((await invite({ username: 'bad name!', email: 'nope', role: 'root' }, 400)).text).toContain('correct these fields');
      await invite({ username: 'ADMIN', email: 'a@example.com', role: 'viewer' }, 409);
      await invite({ username: 'zed', email: 'zed@example.com', role: 'viewer', products: ['NO_SUCH'] }, 400);
    });
  });

  describe('the audit log and the admin API', () => {
    it('the audit page filters by staff member', async () => {
      const page = (await owner.agent.get('/audit?staff=sam').expect(200)).text;
      const [{ n }] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entries WHERE actor = 'staff:sam'`);
      expect(n).toBeGreaterThanOrEqual(3); // signed in, suspended, reinstated
      expect(page.match(/data-testid="audit-row"/g)).toHaveLength(n);
      expect(page).toContain('value="sam"');
      const all = (await owner.agent.get('/audit').expect(200)).text;
      expect(all.match(/data-testid="audit-row"/g)!.length).toBeGreaterThan(n);
    });

    it('GET /api/v1/admin/staff lists accounts without secrets; staff:read for every product only', async () => {
      const { body } = await t.admin.get('/api/v1/admin/staff').expect(200);
      const nina = (body as Record<string, unknown>[]).find((a) => a.username === 'nina');
      expect(nina).toEqual({
        id: expect.any(Number),
        username: 'nina',
        email: 'nina@example.com',
        role: 'support',
        products: ['POS_RETAIL'],
        second_factors: [],
        last_sign_in_at: expect.any(String),
        disabled: false,
      });
      expect(JSON.stringify(body)).not.toMatch(/argon2|password/);
      const limited = await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: 'staff-limited', scopes: ['staff:read'], products: ['POS_RETAIL'] })
        .expect(400);
      expect(limited.body.error.code).toBe('VALIDATION_ERROR');
      const other = await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: 'staff-other', scopes: ['licenses:read'] })
        .expect(201);
      await t.http().get('/api/v1/admin/staff').set('X-API-Key', other.body.token).expect(403);
      const reader = await t.admin
        .post('/api/v1/admin/tokens')
        .send({ name: 'staff-reader', scopes: ['staff:read'] })
        .expect(201);
      await t.http().get('/api/v1/admin/staff').set('X-API-Key', reader.body.token).expect(200);
    });
  });
});
