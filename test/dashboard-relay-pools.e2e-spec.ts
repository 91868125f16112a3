import { generateKeyPairSync } from 'node:crypto';
import { armorJson, dearmorJson, POOL_FILE_LABEL, POOL_REQUEST_LABEL } from '../src/relay/pool-file';
import { UsersService } from '../src/staff/users.service';
import { Agent, loggedInAgent, openDashboard, postForm, unescape } from './dashboard-helpers';
import { createLicense, fingerprint } from './support/factories';
import type { TestApp } from './support/test-app';

const poolRequest = (licenseKey: string, seats = 1) =>
  armorJson(POOL_REQUEST_LABEL, {
    license_key: licenseKey,
    relay_fingerprint: fingerprint(`dash-relay-${Math.random()}`),
    relay_public_key: generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    seats,
  });

describe("dashboard: a licence's relay pools (docs/dashboard.md, Relay pools)", () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;

  beforeAll(async () => {
    ({ t, agent, token } = await openDashboard());
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('shows the pools section and its form; issuing shows the pool file once and lists the pool; ending frees its seats', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 3 } });
    const page = (await agent.get(`/licenses/${lic.id}`).expect(200)).text;
    expect(page).toContain('data-testid="relay-pools"');
    expect(page).toContain('No relay pool.');
    expect(page).toContain('data-testid="relay-pool-form"');

    const issued = await postForm(agent, token, `/licenses/${lic.id}/relay-pools`, {
      request: poolRequest(lic.license_key, 3),
      seats: '2',
      ttl_days: '10',
    }).expect(200);
    expect(issued.text).toContain('data-testid="relay-pool-issued"');
    const file = unescape(/data-testid="relay-pool-file">([^<]*)</.exec(issued.text)![1]);
    const decoded = dearmorJson(POOL_FILE_LABEL, file);
    if (!decoded.ok) throw new Error(decoded.message);
    expect(decoded.value.pool).toMatchObject({ seats: 2, license: { license_key: lic.license_key } });
    const [audit] = await t.sql<{ actor_type: string }>(
      `SELECT actor_type FROM audit_entries WHERE license_id = $1 AND action = 'license.relay_pool_issued'`,
      [lic.id],
    );
    expect(audit.actor_type).toBe('dashboard');

    const listed = (await agent.get(`/licenses/${lic.id}`).expect(200)).text;
    expect(listed).toContain('Relay pools (2 seats lent)');
    expect(listed.match(/data-testid="relay-pool-row"/g)).toHaveLength(1);
    const poolId = (decoded.value.pool as { pool_id: string }).pool_id;
    expect(listed).toContain(`/licenses/${lic.id}/relay-pools/${poolId}/end`);

    const ended = await postForm(agent, token, `/licenses/${lic.id}/relay-pools/${poolId}/end`).expect(303);
    expect(ended.headers.location).toBe(`/licenses/${lic.id}`);
    const after = (await agent.get(`/licenses/${lic.id}`).expect(200)).text;
    expect(after).toContain('Relay pool ended');
    expect(after).toContain('Relay pools (0 seats lent)');
    expect(after).not.toContain('data-testid="end-relay-pool"');
  });

  it('refuses a request for another licence, bad numbers and too many seats, with the reason on the licence page', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 1 } });
    const other = await createLicense(t);
    for (const [fields, words] of [
      [{ request: poolRequest(other.license_key) }, 'This request is for another licence'],
      [{ request: poolRequest(lic.license_key), ttl_days: '400' }, 'ttl_days'],
      [{ request: poolRequest(lic.license_key), seats: 'many' }, 'seats'],
      [{ request: 'not a request' }, 'RELAY POOL REQUEST'],
      [{ request: poolRequest(lic.license_key, 2) }, 'free seat'],
    ] as [Record<string, string>, string][]) {
      const res = await postForm(agent, token, `/licenses/${lic.id}/relay-pools`, fields).expect(303);
      expect(res.headers.location).toBe(`/licenses/${lic.id}`);
      const page = unescape((await agent.get(`/licenses/${lic.id}`).expect(200)).text);
      expect(page).toContain('The relay pool was not issued');
      expect(page).toContain(words);
    }
    const [{ n }] = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM relay_pools WHERE license_id IN ($1, $2)', [
      lic.id,
      other.id,
    ]);
    expect(n).toBe(0);
  });

  it('a viewer sees the pools but no form or end button, and gets 403 when posting anyway', async () => {
    const lic = await createLicense(t, { limits: { max_installations: 2 } });
    await postForm(agent, token, `/licenses/${lic.id}/relay-pools`, { request: poolRequest(lic.license_key) }).expect(200);
    await t.app.get(UsersService).setPassword('relay-viewer', 'viewer-password-123', 'viewer');
    const viewer = await loggedInAgent(t, { username: 'relay-viewer', password: 'viewer-password-123' });
    const csrf = await viewer.token('/licenses');
    const page = (await viewer.agent.get(`/licenses/${lic.id}`).expect(200)).text;
    expect(page).toContain('data-testid="relay-pool-row"');
    expect(page).not.toContain('data-testid="relay-pool-form"');
    expect(page).not.toContain('data-testid="end-relay-pool"');
    await postForm(viewer.agent, csrf, `/licenses/${lic.id}/relay-pools`, { request: poolRequest(lic.license_key) }).expect(403);
    const [{ id }] = await t.sql<{ id: string }>('SELECT id FROM relay_pools WHERE license_id = $1', [lic.id]);
    await postForm(viewer.agent, csrf, `/licenses/${lic.id}/relay-pools/${id}/end`).expect(403);
  });
});
