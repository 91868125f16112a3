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
});
