import { startSmtpServer } from '../support/smtp-server';
import { Deployment, startDeployment } from './support/deployment';

/**
 * Customer e-mail and the portal on a server configured by the environment only (docs/mail.md, Configuration;
 * docs/portal.md, Signing in): SMTP_URL points at a real SMTP server the test runs on loopback, the key mail arrives
 * there, and a customer signs in to the portal with the link that arrives after it.
 */
describe('mail and portal on a server started from the environment', () => {
  let d: Deployment;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  const email = 'process.customer@shop.example';
  let license: { id: number; license_key: string };

  beforeAll(async () => {
    smtp = await startSmtpServer();
    d = await startDeployment({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'licences@vendor.example',
      MAIL_BRAND_NAME: 'Process Vendor',
      PORTAL_ENABLED: 'true',
      MAIL_RETRY_SCHEDULE: '1',
    });
  }, 180_000);
  afterAll(async () => {
    await d?.stop();
    await smtp?.close();
  }, 60_000);

  it('SMTP_URL: a licence made with notify_customer mails its key through the SMTP server', async () => {
    license = await d.admin('POST', '/api/v1/admin/licenses', {
      product_code: 'POS_RETAIL',
      license_type: 'YEARLY',
      customer_name: 'Process Customer',
      customer_email: email,
      notify_customer: true,
    });
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes(email));
    expect(mail.parsed.from?.value).toEqual([{ address: 'licences@vendor.example', name: 'Process Vendor' }]);
    expect(mail.parsed.text).toContain(license.license_key);
  });

  const cookieOf = (res: Response, name: string) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .find((c) => c.startsWith(`${name}=`)) ?? '';
  const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const FORM = 'application/x-www-form-urlencoded';

  it('the portal: the sign-in link arrives by mail at PUBLIC_URL and signs the customer in to their licence', async () => {
    const page = await d.request('/portal/login');
    expect(page.status).toBe(200);
    const asked = await d.request('/portal/login', {
      method: 'POST',
      headers: { 'content-type': FORM, cookie: cookieOf(page, 'portal_form') },
      body: form({ email, _csrf: csrfOf(await page.text()) }),
    });
    expect(asked.status).toBe(200);
    const [mail] = await smtp.waitFor(1, (m) => m.envelopeTo.includes(email) && /sign-in\?token=/.test(m.parsed.text ?? ''));
    const link = new RegExp(`${d.url.replace(/[.:/]/g, '\\$&')}/portal/sign-in\\?token=([A-Za-z0-9_-]+)`).exec(mail.parsed.text ?? '');
    expect(link).not.toBeNull();
    const token = link![1];

    const button = await d.request(`/portal/sign-in?token=${token}`);
    expect(button.status).toBe(200);
    const signedIn = await d.request('/portal/sign-in', {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': FORM, cookie: cookieOf(button, 'portal_form') },
      body: form({ token, _csrf: csrfOf(await button.text()) }),
    });
    expect(signedIn.status).toBe(303);
    const session = cookieOf(signedIn, 'portal_session');
    expect(session).not.toBe('');
    const mine = await d.request(`/portal/licenses/${license.id}`, { redirect: 'manual', headers: { cookie: session } });
    expect(mine.status).toBe(200);
    expect(await mine.text()).toContain(license.license_key);
    const signedOut = await d.request(`/portal/licenses/${license.id}`, { redirect: 'manual' });
    expect(signedOut.status).not.toBe(200);
  });
});
