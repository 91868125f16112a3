import { testConfigFor } from '../../test/support/unit-config';
import { MailService } from './mail.service';

// docs/mail.md, Configuration: links come from PUBLIC_URL only.
describe('MailService', () => {
  const service = (overrides: Parameters<typeof testConfigFor>[0]) =>
    new MailService({} as never, {} as never, {} as never, {} as never, {} as never, testConfigFor(overrides));

  it('attacker: a reminder link is built from PUBLIC_URL with a token bound to the address', () => {
    const mail = service({ publicUrl: 'https://licences.example.com' });
    const { text, html } = mail.render('expiring_soon', 'a@shop.example', 'A', { license_key: 'K', product: { name: 'P' } });
    const link = /https:\/\/licences\.example\.com\/mail\/unsubscribe\?address=a%40shop\.example&token=[\w-]{43}/.exec(text)?.[0];
    expect(link).toBeDefined();
    expect(html).toContain((link as string).replace(/&/g, '&amp;').replace(/=/g, '&#x3D;'));
    expect(text).not.toMatch(/localhost/);
  });

  it('escapes customer data in HTML, not in plain text', () => {
    const { text, html } = service({}).render('license_issued', 'a@shop.example', '<script>x</script>', {
      license_key: 'K',
      product: { name: 'P & Q' },
    });
    expect(html).not.toContain('<script>x</script>');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(text).toContain('Hello <script>x</script>,');
    expect(text).toContain('P & Q');
  });

  describe("the key mail links to the portal and the store's customer portal (docs/mail.md, Links in the key mail)", () => {
    const storePortalUrls = { stripe: 'https://billing.stripe.com/p/login/test_abc', paddle: 'https://customer-portal.paddle.com/cpl_1' };
    const keyMail = (overrides: Parameters<typeof testConfigFor>[0], data: Record<string, unknown>) =>
      service(overrides).render('license_issued', 'a@shop.example', 'A', { license_key: 'K', product: { name: 'P' }, ...data });

    it('the portal on: its address, PUBLIC_URL + /portal and no token, in text and HTML', () => {
      const { text, html } = keyMail({ publicUrl: 'https://licences.example.com' }, {});
      expect(text).toContain('at https://licences.example.com/portal (sign in with this e-mail address)');
      expect(html).toContain('<a href="https://licences.example.com/portal"');
      expect(text).not.toMatch(/portal\S*token|portal\/login\?/);
    });

    it('the portal off (PORTAL_ENABLED=false): no portal link', () => {
      const { text, html } = keyMail({ portal: { enabled: false, loginLimit: 5, storePortalUrls: {} } }, {});
      expect(text).not.toContain('/portal');
      expect(html).not.toContain('/portal');
    });

    it("a store-made licence: its store's customer portal when that store's URL is set; another store's never", () => {
      const portal = { enabled: true, loginLimit: 5, storePortalUrls };
      const stripe = keyMail({ portal }, { store_name: 'stripe' });
      expect(stripe.text).toContain('Invoices, your payment method and your subscription: https://billing.stripe.com/p/login/test_abc');
      expect(stripe.html).toContain('<a href="https://billing.stripe.com/p/login/test_abc"');
      expect(stripe.text).not.toContain('paddle.com');
      // Lemon Squeezy has no URL configured; a licence made by staff has no store.
      expect(keyMail({ portal }, { store_name: 'lemonsqueezy' }).text).not.toContain('Invoices');
      expect(keyMail({ portal }, {}).text).not.toContain('Invoices');
    });

    it('only the key mail carries them', () => {
      const portal = { enabled: true, loginLimit: 5, storePortalUrls };
      const { text } = service({ portal }).render('expired', 'a@shop.example', 'A', { license_key: 'K', store_name: 'stripe' });
      expect(text).not.toContain('billing.stripe.com');
    });
  });
});
