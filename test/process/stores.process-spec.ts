import { Deployment, startDeployment } from './support/deployment';
import { lemonSqueezyPurchase, paddlePurchase, SignedDelivery, stripePurchase } from './support/store-events';

/**
 * Each store switched on the way docs/stores.md says (set the secret, start the server) and nothing else: a correctly
 * signed first purchase makes a licence. The in-process store specs configure the stores in code; this is the check
 * that the environment variables reach them (a Paddle or Lemon Squeezy secret that never left the environment once
 * kept both routes at 404).
 */
const SECRETS = {
  STRIPE_WEBHOOK_SECRET: 'whsec_process_0123456789abcdef',
  PADDLE_WEBHOOK_SECRET: 'pdl_ntfset_process_0123456789abcdef',
  LEMONSQUEEZY_WEBHOOK_SECRET: 'ls_process_signing_secret',
};
const LS_VARIANT = 4711;

interface License {
  id: number;
  customer_email: string;
  product_code: string;
  license_type: string;
  status: string;
  license_key: string;
}

describe('stores on a server started from the environment', () => {
  let d: Deployment;

  beforeAll(async () => {
    d = await startDeployment(SECRETS);
    const plans = [
      { store: 'stripe', price_id: 'price_process', product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' },
      { store: 'paddle', price_id: 'pri_process', product_code: 'ERP_SUITE', license_type: 'MONTHLY', on_end: 'expire' },
      { store: 'lemonsqueezy', price_id: String(LS_VARIANT), product_code: 'POS_RETAIL', license_type: 'MONTHLY', on_end: 'expire' },
    ];
    for (const plan of plans) await d.admin('POST', '/api/v1/admin/store-plans', plan);
  }, 180_000);
  afterAll(() => d?.stop(), 60_000);

  async function deliver(delivery: SignedDelivery): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await d.request(delivery.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...delivery.headers },
      body: delivery.body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function licenseOf(store: string, delivery: SignedDelivery): Promise<License[]> {
    const query = new URLSearchParams({ store, subscription_id: delivery.subscription });
    return d.admin<License[]>('GET', `/api/v1/admin/licenses?${query.toString()}`);
  }

  it('Stripe: STRIPE_WEBHOOK_SECRET alone switches the route on; a signed invoice.paid makes the licence', async () => {
    const purchase = stripePurchase(SECRETS.STRIPE_WEBHOOK_SECRET, 'price_process');
    expect(await deliver(purchase)).toMatchObject({ status: 200, body: { status: 'processed', action: 'purchase' } });
    expect(await licenseOf('stripe', purchase)).toEqual([
      expect.objectContaining({ customer_email: purchase.email, product_code: 'POS_RETAIL', license_type: 'MONTHLY', status: 'active' }),
    ]);
    const forged = { ...purchase, headers: stripePurchase('whsec_someone_else', 'price_process').headers };
    expect(await deliver(forged)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
  });

  it('Paddle: PADDLE_WEBHOOK_SECRET alone switches the route on; customer.created then transaction.completed make the licence', async () => {
    const [told, bought] = paddlePurchase(SECRETS.PADDLE_WEBHOOK_SECRET, 'pri_process');
    expect(await deliver(told)).toMatchObject({ status: 200 });
    expect(await deliver(bought)).toMatchObject({ status: 200, body: { status: 'processed', action: 'purchase' } });
    expect(await licenseOf('paddle', bought)).toEqual([
      expect.objectContaining({ customer_email: bought.email, product_code: 'ERP_SUITE', status: 'active' }),
    ]);
    const [, forged] = paddlePurchase('pdl_someone_else', 'pri_process');
    expect(await deliver(forged)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
  });

  it('Lemon Squeezy: LEMONSQUEEZY_WEBHOOK_SECRET alone switches the route on; subscription_created makes the licence', async () => {
    const purchase = lemonSqueezyPurchase(SECRETS.LEMONSQUEEZY_WEBHOOK_SECRET, LS_VARIANT);
    expect(await deliver(purchase)).toMatchObject({ status: 200, body: { status: 'processed', action: 'purchase' } });
    expect(await licenseOf('lemonsqueezy', purchase)).toEqual([
      expect.objectContaining({ customer_email: purchase.email, product_code: 'POS_RETAIL', status: 'active' }),
    ]);
    const forged = lemonSqueezyPurchase('ls_someone_else', LS_VARIANT);
    expect(await deliver(forged)).toMatchObject({ status: 400, body: { error: { code: 'INVALID_SIGNATURE' } } });
  });
});
