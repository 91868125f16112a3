import { Webhook } from 'standardwebhooks';
import { startReceiver } from '../support/webhook-receiver';
import { Deployment, startDeployment } from './support/deployment';

/**
 * Webhooks on a server configured by the environment only (docs/webhooks.md): WEBHOOK_ALLOW_PRIVATE_NETWORKS lets an
 * endpoint on loopback subscribe, and the job engine of the real process delivers a change to it, signed so that the
 * Standard Webhooks library verifies it with the secret the admin API showed once.
 */
describe('webhooks on a server started from the environment', () => {
  let d: Deployment;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    d = await startDeployment({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_SCHEDULE: '1' });
  }, 180_000);
  afterAll(async () => {
    await d?.stop();
    await receiver?.close();
  }, 60_000);

  it('a licence created over the admin API reaches the receiver as a signed license.created', async () => {
    const endpoint = await d.admin<{ secret: string }>('POST', '/api/v1/admin/webhooks', {
      url: receiver.url,
      events: ['license.created'],
    });
    const license = await d.admin<{ id: number }>('POST', '/api/v1/admin/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      customer_name: 'Webhook Customer',
    });
    const [hook] = await receiver.waitFor(1);
    const verified = new Webhook(endpoint.secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    });
    expect(verified).toMatchObject({ type: 'license.created', data: { id: license.id } });
  });
});
