import { buildConfig } from './load-config';
import { ConfigError } from './config.error';
import { validateEnv } from './env.schema';

// docs/mail.md, Configuration: mail settings are checked at boot like every other variable.
describe('mail configuration', () => {
  const config = (env: NodeJS.ProcessEnv) =>
    buildConfig(
      validateEnv({ API_KEY: 'k-0123456789abcdef', SESSION_SECRET: 's'.repeat(32), KEYRING_SECRET: 'k'.repeat(32), ...env }),
      'postgres://x@h/db',
    ).config;

  it('defaults: no SMTP (.eml files), PUBLIC_URL from the port, flagged for the start-up warning', () => {
    const c = config({ PORT: '8080' });
    expect(c.mail).toEqual({
      smtpUrl: undefined,
      from: 'licences@localhost',
      brandName: 'Licence server',
      replyTo: undefined,
      disabledKinds: [],
      retryScheduleSeconds: [60, 300, 1800, 7200, 28800],
    });
    expect(c.publicUrl).toBe('http://localhost:8080');
    expect(c.publicUrlDefaulted).toBe(true);
  });

  it('reads every mail variable', () => {
    const c = config({
      PUBLIC_URL: 'https://licences.example.com/',
      SMTP_URL: 'smtps://user:pass@smtp.example.com:465',
      MAIL_FROM: 'keys@example.com',
      MAIL_BRAND_NAME: 'Đorđe Soft',
      MAIL_REPLY_TO: 'support@example.com',
      MAIL_DISABLED_KINDS: 'expired, seat_released',
      MAIL_RETRY_SCHEDULE: '1,2',
    });
    expect(c.publicUrl).toBe('https://licences.example.com');
    expect(c.publicUrlDefaulted).toBe(false);
    expect(c.mail).toEqual({
      smtpUrl: 'smtps://user:pass@smtp.example.com:465',
      from: 'keys@example.com',
      brandName: 'Đorđe Soft',
      replyTo: 'support@example.com',
      disabledKinds: ['expired', 'seat_released'],
      retryScheduleSeconds: [1, 2],
    });
  });

  it.each([
    ['PUBLIC_URL', 'licences.example.com'],
    ['PUBLIC_URL', 'https://licences.example.com/?next=evil'],
    ['PUBLIC_URL', 'javascript://x'],
    ['SMTP_URL', 'http://smtp.example.com'],
    ['MAIL_FROM', 'Keys <keys@example.com>'],
    ['MAIL_FROM', 'keys@example.com\r\nBcc: victim@example.com'],
    ['MAIL_BRAND_NAME', 'Vendor\r\nBcc: victim@example.com'],
    ['MAIL_REPLY_TO', 'not-an-address'],
    ['MAIL_DISABLED_KINDS', 'license_issued,marketing'],
    ['MAIL_RETRY_SCHEDULE', 'soon'],
  ])('refuses %s=%j at boot (a header is never built from a line break)', (name, value) => {
    expect(() => validateEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => validateEnv({ [name]: value })).toThrow(name);
  });
});
