import { Agent, loggedInAgent, openDashboard, postForm } from './dashboard-helpers';
import { activationRequest, createLicense, fingerprint } from './support/factories';
import type { TestApp } from './support/test-app';

const decode = (file: string) =>
  JSON.parse(Buffer.from(file.trim().split('\n').slice(1, -1).join(''), 'base64').toString('utf8')) as {
    license: { license_key: string; machine_fingerprint: string };
  };

describe('dashboard: offline activation and licence file downloads', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;

  beforeAll(async () => {
    ({ t, agent, token } = await openDashboard());
  }, 60_000);
  afterAll(() => t.close());

  const seats = async (licenseId: number) =>
    (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM activations WHERE license_id = $1 AND released_at IS NULL', [licenseId]))[0]
      .n;

  it('shows the form, previews what a request binds without storing anything, then binds and downloads <key>.lic', async () => {
    const lic = await createLicense(t, { customer_name: 'Fabrika <Kablova> Zaječar' });
    const fp = fingerprint('dash-airgap');
    const request = activationRequest({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'press-line-2', os: 'QNX 7' });

    expect((await agent.get('/offline-activation').expect(200)).text).toContain('data-testid="offline-request-form"');

    const preview = await postForm(agent, token, '/offline-activation/preview', { request }).expect(200);
    expect(preview.text).toContain('data-testid="offline-preview"');
    expect(preview.text).toContain(lic.license_key);
    expect(preview.text).toContain('Fabrika &lt;Kablova&gt; Zaječar');
    expect(preview.text).toContain('press-line-2');
    expect(preview.text).toContain(fp);
    expect(preview.text).toContain('0 of 1 in use');
    expect(await seats(lic.id)).toBe(0);

    // The page changes to say what was bound and offer the file (docs/dashboard.md, Messages after an action).
    await postForm(agent, token, '/offline-activation', { request }).expect(303).expect('Location', '/offline-activation/done');
    expect(await seats(lic.id)).toBe(1);
    const done = await agent.get('/offline-activation/done').expect(200);
    expect(done.text).toContain('class="flash flash-success" role="status">Seat bound: press-line-2 now holds ' + lic.license_key);
    expect(done.text).toContain('data-auto-download');
    const download = await agent.get('/offline-activation/done/file').expect(200);
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${lic.license_key}.lic"`);
    expect(download.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(decode(download.text).license.machine_fingerprint).toBe(fp);
    // A reload binds nothing and does not restart the download (docs/dashboard.md, Messages after an action).
    expect((await agent.get('/offline-activation/done').expect(200)).text).not.toContain('data-auto-download');
    expect((await agent.get('/offline-activation/done/file').expect(200)).text).toBe(download.text);
    expect(await seats(lic.id)).toBe(1);
    const [entry] = await t.sql<{ actor_type: string }>(
      "SELECT actor_type FROM audit_entries WHERE license_id = $1 AND action = 'license.activated'",
      [lic.id],
    );
    expect(entry.actor_type).toBe('dashboard');
  });

  it('a malformed request comes back on the form with its message; a denial shows its code', async () => {
    const bad = await postForm(agent, token, '/offline-activation/preview', { request: 'not a request' }).expect(400);
    expect(bad.text).toContain('data-testid="offline-errors"');
    expect(bad.text).toContain('request must start with -----BEGIN ACTIVATION REQUEST-----');

    const lic = await createLicense(t);
    await t
      .http()
      .post('/api/v1/activate')
      .send({ license_key: lic.license_key, machine_fingerprint: fingerprint('first'), hostname: 'first' })
      .expect(200);
    const request = activationRequest({ license_key: lic.license_key, machine_fingerprint: fingerprint('second'), hostname: 'second' });
    const preview = await postForm(agent, token, '/offline-activation/preview', { request }).expect(200);
    expect(preview.text).toContain('Every seat is taken');
    const denied = await postForm(agent, token, '/offline-activation', { request }).expect(400);
    expect(denied.text).toContain('ALREADY_ACTIVATED');
    expect(await seats(lic.id)).toBe(1);
  });

  it('needs a CSRF token and a session', async () => {
    const request = activationRequest({ license_key: 'POS-AAAAA-AAAAA-AAAAA-AAAAA', machine_fingerprint: fingerprint('x'), hostname: 'x' });
    const noToken = await postForm(agent, 'wrong-token', '/offline-activation', { request });
    expect(noToken.status).toBe(403);
    const anonymous = await t.http().get('/offline-activation');
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.location).toBe('/login');
    // Another session (or none) never gets someone's file (docs/dashboard.md, Messages after an action).
    await t.http().get('/offline-activation/done/file').expect(302).expect('Location', '/login');
    const { agent: other } = await loggedInAgent(t);
    await other.get('/offline-activation/done/file').expect(303).expect('Location', '/offline-activation');
  });

  it('the licence page offers a licence file per bound machine, issued with the dashboard user as actor', async () => {
    const lic = await createLicense(t);
    const fp = fingerprint('dash-download');
    await t.http().post('/api/v1/activate').send({ license_key: lic.license_key, machine_fingerprint: fp, hostname: 'till-9' }).expect(200);
    const page = await agent.get(`/licenses/${lic.id}`).expect(200);
    expect(page.text).toContain('data-testid="download-license-file"');
    const download = await postForm(agent, token, `/licenses/${lic.id}/license-file`, { machine_fingerprint: fp }).expect(200);
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${lic.license_key}.lic"`);
    expect(decode(download.text).license.license_key).toBe(lic.license_key);
    const [entry] = await t.sql<{ actor_type: string }>(
      "SELECT actor_type FROM audit_entries WHERE license_id = $1 AND action = 'license.file_issued'",
      [lic.id],
    );
    expect(entry.actor_type).toBe('dashboard');

    const notBound = await postForm(agent, token, `/licenses/${lic.id}/license-file`, { machine_fingerprint: fingerprint('nobody') });
    expect(notBound.status).toBe(303);
    const flash = await agent.get(`/licenses/${lic.id}`).expect(200);
    expect(flash.text).toContain('No licence file: This machine holds no seat of the licence.');
  });
});
