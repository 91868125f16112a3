import { Agent, loggedInAgent, postForm } from './dashboard-helpers';
import { fingerprint } from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

jest.setTimeout(60_000);

/** Dashboard: a product's self-service trials (docs/licences.md, Trials; docs/dashboard.md, Pages). */
describe('dashboard: products and their trials', () => {
  let t: TestApp;
  let agent: Agent;
  let token: string;
  let product: { id: number; code: string };

  beforeAll(async () => {
    t = await createTestApp();
    product = (
      await t.admin
        .post('/api/v1/admin/products')
        .send({ code: 'TRIAL_PAGE', name: 'Trial Page Product', key_prefix: 'TPP', available_features: ['REPORTS', 'EXPORT'] })
        .expect(201)
    ).body as { id: number; code: string };
    const session = await loggedInAgent(t);
    agent = session.agent;
    token = await session.token('/products');
  }, 60_000);
  afterAll(() => t.close());

  const trialOf = async () => ((await t.admin.get(`/api/v1/admin/products/${product.id}`).expect(200)).body as { trial: unknown }).trial;
  const startTrial = (machine: string) =>
    t
      .http()
      .post('/api/v1/trials')
      .send({ product: product.code, machine_fingerprint: fingerprint(machine), hostname: machine });

  it('lists the products with their trial settings, linked from the top bar', async () => {
    const page = await agent.get('/products').expect(200);
    expect(page.text).toContain('href="/products"');
    expect(page.text).toContain('Trial Page Product');
    expect(page.text).toContain(`action="/products/${product.id}/trial"`);
    expect(page.text).toMatch(/data-testid="trial-state">No self-service trials\./);
  });

  it('turns trials on with days and machines (audited as product.updated by the signed-in user), then off again', async () => {
    await postForm(agent, token, `/products/${product.id}/trial`, { days: '14', max_installations: '2' })
      .expect(303)
      .expect('Location', '/products');
    expect(await trialOf()).toEqual({ days: 14, max_installations: 2 });
    const page = await agent.get('/products').expect(200);
    expect(page.text).toContain('self-service trials of 14 days, 2 machine(s) each');
    expect(page.text).toMatch(/Self-service trials: <strong>14 days<\/strong>, 2 machine\(s\) each/);
    const [audit] = await t.sql<{ actor_type: string; actor: string; details: { changes: Record<string, unknown> } }>(
      `SELECT actor_type, actor, details FROM audit_entries WHERE action = 'product.updated' AND product_code = $1 ORDER BY id DESC LIMIT 1`,
      [product.code],
    );
    expect(audit).toEqual(expect.objectContaining({ actor_type: 'dashboard', actor: 'staff:admin' }));
    expect(JSON.stringify(audit.details)).toContain('trial');
    await startTrial('page-laptop-1').expect(201);

    // Features set through the admin API stay when the page changes the days.
    await t.admin
      .put(`/api/v1/admin/products/${product.id}`)
      .send({ trial: { days: 14, features: ['REPORTS'] } })
      .expect(200);
    await postForm(agent, token, `/products/${product.id}/trial`, { days: '7', max_installations: '' }).expect(303);
    expect(await trialOf()).toEqual({ days: 7, features: ['REPORTS'] });

    await postForm(agent, token, `/products/${product.id}/trial`, { days: '', max_installations: '3' }).expect(303);
    expect(await trialOf()).toBeNull();
    expect((await startTrial('page-laptop-2').expect(400)).body.error.code).toBe('TRIALS_DISABLED');
  });

  it.each([
    ['0', ''],
    ['91', ''],
    ['1.5', ''],
    ['abc', ''],
    ['-3', ''],
    ['14', '0'],
    ['14', '101'],
    ['14', 'two'],
  ])('refuses days %j, machines %j with a message on the page (400) and changes nothing', async (days, machines) => {
    await t.admin
      .put(`/api/v1/admin/products/${product.id}`)
      .send({ trial: { days: 10 } })
      .expect(200);
    const res = await postForm(agent, token, `/products/${product.id}/trial`, { days, max_installations: machines }).expect(400);
    expect(res.text).toContain('data-testid="trial-errors"');
    expect(res.text).toMatch(/Trial (days|max_installations) must be an integer/);
    expect(res.text).toContain(`value="${days}"`);
    expect(await trialOf()).toEqual({ days: 10 });
  });

  it("a licence issued later for a trial's e-mail links the trial on its page", async () => {
    await t.admin
      .put(`/api/v1/admin/products/${product.id}`)
      .send({ trial: { days: 10 } })
      .expect(200);
    const trial = await t
      .http()
      .post('/api/v1/trials')
      .send({
        product: product.code,
        machine_fingerprint: fingerprint('convert-me'),
        hostname: 'convert-me',
        customer_email: 'Convert@Shop.example',
      })
      .expect(201);
    const [{ id: trialId }] = await t.sql<{ id: number }>('SELECT id FROM licenses WHERE license_key = $1', [
      trial.body.license.license_key,
    ]);
    const bought = await t.admin
      .post('/api/v1/admin/licenses')
      .send({ product_code: product.code, license_type: 'YEARLY', customer_name: 'Converted', customer_email: 'convert@shop.example' })
      .expect(201);
    const page = await agent.get(`/licenses/${bought.body.id}`).expect(200);
    expect(page.text).toContain(`data-testid="converted-from"><a href="/licenses/${trialId}">`);
    expect((await agent.get(`/licenses/${trialId}`).expect(200)).text).not.toContain('data-testid="converted-from"');
  });

  it('attacker: no CSRF token, no change; no session, no page; an unknown product is 404', async () => {
    await agent.post(`/products/${product.id}/trial`).type('form').send({ days: '90' }).expect(403);
    expect(await trialOf()).toEqual({ days: 10 });
    expect((await t.http().get('/products')).status).toBe(302);
    await postForm(agent, token, '/products/999999/trial', { days: '5' }).expect(404);
  });
});
