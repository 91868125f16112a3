import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, flashOf, loggedInAgent, postForm } from './dashboard-helpers';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/** Dashboard: a product's Releases page (docs/dashboard.md, Releases), on the admin API's use cases. */
describe('dashboard: releases of a product', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;
  let dataDir: string;
  const page = '/products/POS_RETAIL/releases';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'licence-release-page-'));
    t = await createTestApp({ dataDir });
    const session = await loggedInAgent(t);
    agent = session.agent;
    token = await session.token(page);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const release = async (version: string) =>
    (
      await t.sql<{ id: number; published_at: Date | null; yanked_at: Date | null }>(
        'SELECT id, published_at, yanked_at FROM releases WHERE version = $1',
        [version],
      )
    )[0];

  it('is linked from the products page and refuses a bad version with the API’s message', async () => {
    expect((await agent.get('/products').expect(200)).text).toContain(`href="${page}"`);
    const bad = await postForm(agent, token, page, { version: 'v1', channel: 'stable' }).expect(400);
    expect(bad.text).toMatch(/data-testid="release-errors"[^>]*>version must be a SemVer 2\.0 version/);
  });

  it('creates a draft, uploads a file streamed with the session’s CSRF header, publishes, counts, yanks', async () => {
    await postForm(agent, token, page, { version: '7.0.0', channel: 'beta', notes: 'From the page', required_features: 'REPORTS' }).expect(
      303,
    );
    expect(await flashOf(agent, page)).toEqual(['success', 'Draft 7.0.0 created: upload its files, then publish it.']);
    const { id } = await release('7.0.0');
    const html = (await agent.get(page).expect(200)).text;
    expect(html).toContain(`data-release-upload="/products/POS_RETAIL/releases/${id}/artifacts/"`);
    expect(html).toMatch(/<meta name="csrf-token" content="[^"]+">/);

    // Without the CSRF header the upload is refused before anything is stored.
    await agent
      .put(`${page}/${id}/artifacts/app.zip?platform=linux&arch=x64`)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('zip'))
      .expect(403);
    const uploaded = await agent
      .put(`${page}/${id}/artifacts/app.zip?platform=linux&arch=x64`)
      .set('X-CSRF-Token', token)
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('zip bytes'))
      .expect(201);
    expect(uploaded.body).toMatchObject({ filename: 'app.zip', size: 9 });
    expect((await agent.get(page).expect(200)).text).toMatch(/data-testid="artifact-row"><td class="mono">app\.zip/);

    await postForm(agent, token, `${page}/${id}/publish`).expect(303);
    expect((await release('7.0.0')).published_at).not.toBeNull();
    await t.sql(`INSERT INTO release_downloads (release_id, day, count) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 3)`, [id]);
    const published = (await agent.get(page).expect(200)).text;
    expect(published).toMatch(/data-testid="release-downloads">3</);
    expect(published).toContain('data-testid="release-days"');

    await postForm(agent, token, `${page}/${id}/yank`).expect(303);
    expect((await release('7.0.0')).yanked_at).not.toBeNull();
    const audit = await t.sql(`SELECT action, actor_type FROM audit_entries WHERE action LIKE 'release.%' ORDER BY id`);
    expect(audit).toEqual([
      { action: 'release.created', actor_type: 'dashboard' },
      { action: 'release.artifact_uploaded', actor_type: 'dashboard' },
      { action: 'release.published', actor_type: 'dashboard' },
      { action: 'release.yanked', actor_type: 'dashboard' },
    ]);
  });

  it('deletes a draft; a form without the CSRF token changes nothing', async () => {
    await postForm(agent, token, page, { version: '8.0.0' }).expect(303);
    const { id } = await release('8.0.0');
    await agent.post(`${page}/${id}/delete`).type('form').send({}).expect(403);
    expect(await release('8.0.0')).toBeDefined();
    await postForm(agent, token, `${page}/${id}/delete`).expect(303);
    expect(await release('8.0.0')).toBeUndefined();
  });
});
