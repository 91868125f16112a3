import { KeyringService } from '../src/keyring/keyring.service';
import { csrfFrom, loggedInAgent, postForm } from './dashboard-helpers';
import { createTestApp, TestApp } from './support/test-app';

// Start-up of the app and RSA key generation (rotations) take seconds on a busy machine.
jest.setTimeout(30_000);

/** The dashboard's signing-keys page: list, rotate and revoke, each behind a confirmation step and the CSRF token. */
describe('dashboard: signing keys', () => {
  let t: TestApp;
  let session: Awaited<ReturnType<typeof loggedInAgent>>;
  beforeAll(async () => {
    t = await createTestApp();
    session = await loggedInAgent(t);
  }, 60_000);
  afterAll(() => t.close());

  const activeKeyId = () => t.app.get(KeyringService).activeKey().keyId;
  const keyRows = () => t.sql<{ key_id: string; status: string }>('SELECT key_id, status FROM signing_keys ORDER BY created_at');

  it('needs a session', async () => {
    await t.http().get('/signing-keys').expect(302).expect('Location', '/login');
    await t.http().get('/signing-keys/rotate').expect(302).expect('Location', '/login');
  });

  it('lists the keys with their state, and the nav links to the page', async () => {
    const page = await session.agent.get('/signing-keys').expect(200);
    expect(page.text).toContain('<a href="/signing-keys" aria-current="page">Signing keys</a>');
    expect(page.text).toMatch(new RegExp(`data-key-id="${activeKeyId()}"[\\s\\S]*?badge-active">active<`));
    expect(page.text).toContain('href="/signing-keys/rotate"');
  });

  it('rotates only from the confirmation page, with the CSRF token', async () => {
    const before = activeKeyId();
    const confirmation = await session.agent.get('/signing-keys/rotate').expect(200);
    expect(confirmation.text).toContain(before);
    const token = csrfFrom(confirmation.text);
    // No token: 403, nothing changes.
    await session.agent.post('/signing-keys/rotate').type('form').send({ confirm: 'rotate' }).expect(403);
    // A POST without the confirmation field goes back to the confirmation page.
    await postForm(session.agent, token, '/signing-keys/rotate').expect(303).expect('Location', '/signing-keys/rotate');
    expect(activeKeyId()).toBe(before);
    expect(await keyRows()).toHaveLength(1);

    await postForm(session.agent, token, '/signing-keys/rotate', { confirm: 'rotate' }).expect(303).expect('Location', '/signing-keys');
    const after = activeKeyId();
    expect(after).not.toBe(before);
    expect(await keyRows()).toEqual([
      { key_id: before, status: 'retired' },
      { key_id: after, status: 'active' },
    ]);
    const page = await session.agent.get('/signing-keys').expect(200);
    expect(page.text).toContain(`Key ${after} is now active`);
    expect(page.text).toContain(`href="/signing-keys/${before}/revoke"`);
    const [entry] = await t.sql<{ actor_type: string; actor: string }>(
      `SELECT actor_type, actor FROM audit_entries WHERE action = 'signing_key.rotated'`,
    );
    expect(entry).toEqual({ actor_type: 'dashboard', actor: 'staff:admin' });
  });

  it('revokes a retired key after the key id is typed; the active key cannot be revoked', async () => {
    const retired = (await keyRows()).find((k) => k.status === 'retired')?.key_id as string;
    const confirmation = await session.agent.get(`/signing-keys/${retired}/revoke`).expect(200);
    expect(confirmation.text).toContain('nothing it signed verifies any more');
    const token = csrfFrom(confirmation.text);
    await postForm(session.agent, token, `/signing-keys/${retired}/revoke`, { confirm: 'wrong' })
      .expect(303)
      .expect('Location', `/signing-keys/${retired}/revoke`);
    expect((await keyRows()).find((k) => k.key_id === retired)?.status).toBe('retired');

    await postForm(session.agent, token, `/signing-keys/${retired}/revoke`, { confirm: retired, reason: 'test <leak>' })
      .expect(303)
      .expect('Location', '/signing-keys');
    expect((await keyRows()).find((k) => k.key_id === retired)?.status).toBe('revoked');
    const [entry] = await t.sql<{ actor_type: string; details: Record<string, unknown> }>(
      `SELECT actor_type, details FROM audit_entries WHERE action = 'signing_key.revoked'`,
    );
    expect(entry).toEqual({ actor_type: 'dashboard', details: { key_id: retired, reason: 'test <leak>' } });
    expect((await session.agent.get('/signing-keys').expect(200)).text).toContain(`Key ${retired} is revoked`);

    const active = activeKeyId();
    await postForm(session.agent, token, `/signing-keys/${active}/revoke`, { confirm: active })
      .expect(303)
      .expect('Location', '/signing-keys');
    expect((await session.agent.get('/signing-keys').expect(200)).text).toContain('The active signing key cannot be revoked');
    expect(activeKeyId()).toBe(active);
  });

  it('an unknown or malformed key id is a 404 page', async () => {
    await session.agent.get('/signing-keys/0123456789abcdef/revoke').expect(404);
    await session.agent.get('/signing-keys/nope/revoke').expect(404);
    await session.agent.get('/signing-keys/a/b/c').expect(404);
  });

  it('offers the algorithm of the new key; Ed25519 is listed with the key that endorsed it; an unknown algorithm changes nothing', async () => {
    const confirmation = await session.agent.get('/signing-keys/rotate').expect(200);
    expect(confirmation.text).toContain('value="Ed25519"');
    const token = csrfFrom(confirmation.text);
    const before = activeKeyId();
    await postForm(session.agent, token, '/signing-keys/rotate', { confirm: 'rotate', algorithm: 'DSA' })
      .expect(303)
      .expect('Location', '/signing-keys/rotate');
    expect(activeKeyId()).toBe(before);
    await postForm(session.agent, token, '/signing-keys/rotate', { confirm: 'rotate', algorithm: 'Ed25519' }).expect(303);
    const after = activeKeyId();
    expect(t.app.get(KeyringService).activeKey().algorithm).toBe('Ed25519');
    const page = await session.agent.get('/signing-keys').expect(200);
    expect(page.text).toContain(`Key ${after} is now active (Ed25519)`);
    expect(page.text).toMatch(new RegExp(`data-key-id="${after}"[\\s\\S]*?Ed25519[\\s\\S]*?${before}`));
  });
});
