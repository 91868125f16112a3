import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { FirstUserInitializer } from '../src/staff/first-user';
import { createOrResetUser } from '../src/staff/user-command';
import { ADMIN, csrfFrom, loggedInAgent } from './dashboard-helpers';
import { createTestApp, TestApp } from './support/test-app';

describe('dashboard set-up: first user, login rate limit, session lifetime, session store outage', () => {
  describe('first user without ADMIN_PASSWORD', () => {
    let t: TestApp;
    let dataDir: string;
    let printed: string;

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'dashboard-first-user-'));
      const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        t = await createTestApp({ adminUsername: 'boss', adminPassword: undefined, dataDir });
        printed = write.mock.calls.map((c) => String(c[0])).join('');
      } finally {
        write.mockRestore();
      }
    }, 60_000);
    afterAll(async () => {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('generates a password into DATA_DIR/admin-password (0600), prints it once, and it logs in', async () => {
      const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim();
      expect(password.length).toBeGreaterThanOrEqual(16);
      expect(statSync(join(dataDir, 'admin-password')).mode & 0o777).toBe(0o600);
      expect(printed).toContain('Dashboard user "boss" created with a generated password');
      expect(printed).toContain(password);
      await loggedInAgent(t, { username: 'boss', password });
      expect(
        await t.sql(
          "SELECT action, actor_type, actor, details FROM audit_entries WHERE action IN ('staff.joined', 'staff.password_reset')",
        ),
      ).toEqual([{ action: 'staff.joined', actor_type: 'system', actor: 'system', details: { username: 'boss', first_user: true } }]);
      expect(await t.sql("SELECT 1 FROM event_outbox WHERE type LIKE 'staff.%'")).toEqual([]);
    });

    it('leaves existing users alone and prints nothing on later starts', async () => {
      const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        await t.app.get(FirstUserInitializer).onApplicationBootstrap();
        expect(write).not.toHaveBeenCalled();
      } finally {
        write.mockRestore();
      }
      expect(await t.sql('SELECT username FROM users')).toEqual([{ username: 'boss' }]);
    });

    it('re-creates the user from the stored password file, without printing it, when the users are gone', async () => {
      const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim();
      await t.sql('DELETE FROM users');
      const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        await t.app.get(FirstUserInitializer).onApplicationBootstrap();
        expect(write.mock.calls.map((c) => String(c[0])).join('')).not.toContain(password);
      } finally {
        write.mockRestore();
      }
      await loggedInAgent(t, { username: 'boss', password });
    });
  });

  describe('login rate limit', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ rateLimits: { activate: 1000, deactivate: 1000, validate: 1000, heartbeat: 1000, admin: 1000, login: 3 } });
    }, 60_000);
    afterAll(() => t.close());

    it('allows RATE_LIMIT_LOGIN attempts per minute and IP, then re-renders the login form with 429', async () => {
      const agent = request.agent(t.app.getHttpServer());
      const token = csrfFrom((await agent.get('/login')).text);
      const attempt = (password: string) => agent.post('/login').type('form').send({ username: 'admin', password, _csrf: token });
      for (let i = 0; i < 3; i++) await attempt('wrong-password').expect(401);
      const limited = await attempt(ADMIN.password).expect(429); // even the right password waits
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['content-type']).toMatch(/text\/html/);
      expect(limited.text).toContain('Too many login attempts');
      expect(limited.text).toContain('name="_csrf"');
      await agent.get('/dashboard').expect(302).expect('Location', '/login');
      // Only the login form is limited.
      await agent.get('/login').expect(200);
    });
  });

  describe('session lifetime', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp()), 60_000);
    afterAll(() => t.close());

    it('ends a session 8 hours after login even while it is in use', async () => {
      const { agent } = await loggedInAgent(t);
      await agent.get('/dashboard').expect(200);
      await t.sql(`UPDATE session SET sess = jsonb_set(sess::jsonb, '{passport,user,loggedInAt}', to_jsonb($1::bigint))::json`, [
        Date.now() - 8 * 3600_000 - 1000,
      ]);
      await agent.get('/dashboard').expect(302).expect('Location', '/login');
    });

    it('ends the session of a user who was deleted', async () => {
      await t.sql(
        "INSERT INTO users (username, password_hash, role) VALUES ('temp', (SELECT password_hash FROM users WHERE username = 'admin'), 'owner')",
      );
      const { agent } = await loggedInAgent(t, { username: 'temp', password: ADMIN.password });
      await t.sql("DELETE FROM users WHERE username = 'temp'");
      await agent.get('/dashboard').expect(302).expect('Location', '/login');
    });
  });

  describe('npm run user:create (createOrResetUser)', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp()), 60_000);
    afterAll(() => t.close());

    it('creates a user who can log in, then resets the password, which ends their sessions', async () => {
      expect(await createOrResetUser(t.config.databaseUrl, 'operator', 'first-password-1')).toBe(true);
      const { agent } = await loggedInAgent(t, { username: 'operator', password: 'first-password-1' });
      const admin = await loggedInAgent(t);
      expect(await createOrResetUser(t.config.databaseUrl, 'OPERATOR', 'second-password-2')).toBe(false); // same user, any case
      await agent.get('/dashboard').expect(302).expect('Location', '/login');
      await admin.agent.get('/dashboard').expect(200); // other users keep their sessions
      await loggedInAgent(t, { username: 'operator', password: 'second-password-2' });
      const hashes = await t.sql("SELECT password_hash FROM users WHERE lower(username) = 'operator'");
      expect(hashes).toHaveLength(1);
      expect(hashes[0].password_hash).toMatch(/^\$argon2id\$/);
      // Each account change is audited by the system, naming the user as typed (docs/licences.md, Audit log).
      expect(
        await t.sql(
          "SELECT action, actor_type, actor, details FROM audit_entries WHERE details->>'username' ILIKE 'operator' AND actor_type = 'system' ORDER BY id",
        ),
      ).toEqual([
        { action: 'staff.joined', actor_type: 'system', actor: 'system', details: { username: 'operator', role: 'owner' } },
        { action: 'staff.password_reset', actor_type: 'system', actor: 'system', details: { username: 'OPERATOR' } },
      ]);
    });

    it('--role gives a new account its role (owner by default); a reset keeps the role it has', async () => {
      expect(await createOrResetUser(t.config.databaseUrl, 'finance', 'finance-password-1', 'viewer')).toBe(true);
      expect(await createOrResetUser(t.config.databaseUrl, 'finance', 'finance-password-2', 'owner')).toBe(false);
      expect(await createOrResetUser(t.config.databaseUrl, 'boss', 'boss-password-1')).toBe(true);
      expect(await t.sql("SELECT username, role FROM users WHERE username IN ('finance', 'boss') ORDER BY username")).toEqual([
        { username: 'boss', role: 'owner' },
        { username: 'finance', role: 'viewer' },
      ]);
      const viewer = await loggedInAgent(t, { username: 'finance', password: 'finance-password-2' });
      await viewer.agent.get('/licenses/new').expect(403);
    });

    it('keeps spaces in passwords as typed', async () => {
      await createOrResetUser(t.config.databaseUrl, 'spacey', '  two spaces  ');
      await loggedInAgent(t, { username: 'spacey', password: '  two spaces  ' });
      const agent = request.agent(t.app.getHttpServer());
      const token = csrfFrom((await agent.get('/login')).text);
      await agent.post('/login').type('form').send({ username: 'spacey', password: 'two spaces', _csrf: token }).expect(401);
    });

    it.each([
      ['bad name!', 'long-enough-password', /username/],
      ['operator', 'short', /at least 8/],
      ['operator', 'x'.repeat(257), /at most 256/],
    ])('refuses user %j with password %j', async (username, password, message) => {
      const entries = () => t.sql("SELECT id FROM audit_entries WHERE action LIKE 'staff.%'");
      const before = await entries();
      await expect(createOrResetUser(t.config.databaseUrl, username, password)).rejects.toThrow(message);
      expect(await entries()).toEqual(before);
    });
  });

  describe('with REDIS_URL unreachable', () => {
    let t: TestApp;
    beforeAll(async () => (t = await createTestApp({ redisUrl: 'redis://127.0.0.1:1' })), 60_000);
    afterAll(() => t.close());

    it('keeps sessions in Redis only: logging in answers a 503 page at once instead of hanging; the API keeps working', async () => {
      const agent = request.agent(t.app.getHttpServer());
      const page = await agent.get('/login').expect(200); // the session cannot be stored...
      const res = await agent
        .post('/login')
        .type('form')
        .send({ ...ADMIN, _csrf: csrfFrom(page.text) });
      expect(res.status).toBe(503); // ...nor read back
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toContain('Service unavailable');
      expect((await t.sql('SELECT count(*)::int AS n FROM session'))[0].n).toBe(0);
      await t.admin.get('/api/v1/admin/products').expect(200);
    });
  });
});
