import { ConfigError } from '../config/config.error';
import { validateEnv } from '../config/env.schema';
import { buildConfig } from '../config/load-config';
import { maskedKey } from '../dashboard/views/display';
import { deactivationLimitMessage, portalLicenceLabel } from './portal-licenses.controller';
import { EMAIL_FORMAT, normaliseEmail } from './portal-sign-in.service';

// docs/portal.md: the rules of the portal that need no server.
describe('customer portal rules', () => {
  const config = (env: NodeJS.ProcessEnv) =>
    buildConfig(
      validateEnv({ API_KEY: 'k-0123456789abcdef', SESSION_SECRET: 's'.repeat(32), KEYRING_SECRET: 'k'.repeat(32), ...env }),
      'postgres://x@h/db',
    ).config;

  it('configuration: on by default, 5 links per 15 minutes, no store portal links', () => {
    expect(config({}).portal).toEqual({ enabled: true, loginLimit: 5, storePortalUrls: {} });
    expect(
      config({ PORTAL_ENABLED: 'false', RATE_LIMIT_PORTAL_LOGIN: '3', STRIPE_CUSTOMER_PORTAL_URL: 'https://billing.stripe.com/p/login/x' })
        .portal,
    ).toEqual({ enabled: false, loginLimit: 3, storePortalUrls: { stripe: 'https://billing.stripe.com/p/login/x' } });
  });

  it.each([
    ['PORTAL_ENABLED', 'yes'],
    ['RATE_LIMIT_PORTAL_LOGIN', '0'],
    ['STRIPE_CUSTOMER_PORTAL_URL', 'http://billing.example/plain-http'],
    ['LEMONSQUEEZY_CUSTOMER_PORTAL_URL', 'https://x.example/"><script>'],
  ])('refuses %s=%s at start, naming the variable', (name, value) => {
    expect(() => validateEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => validateEnv({ [name]: value })).toThrow(name);
  });

  it('compares addresses trimmed and lower-cased, and takes one mailbox only', () => {
    expect(normaliseEmail('  Ana.Kovac@Shop.Example ')).toBe('ana.kovac@shop.example');
    for (const ok of ['a@b.example', 'first.last+tag@sub.shop.example']) expect(EMAIL_FORMAT.test(ok)).toBe(true);
    for (const bad of [
      'a@b',
      'a b@c.example',
      'a@b.example\r\nBcc: x@y.example',
      'a@b@c.example',
      '<a@b.example>',
      'a@b.example,c@d.example',
    ])
      expect(EMAIL_FORMAT.test(bad)).toBe(false);
  });

  it("names a licence link by product, the key's last group and the expiry, in the customer's words", () => {
    const now = new Date('2026-06-15T12:00:00Z');
    const licence = (expires_at: string | null) => ({
      product: { name: 'Retail Point of Sale' },
      license_key: 'POS-7K3QM-X9D2R-TB4WN-H8C5Z',
      expires_at,
    });
    expect(portalLicenceLabel(licence('2027-01-31T23:59:59Z'), now)).toBe(
      'Retail Point of Sale, key ending H8C5Z, valid until 31 January 2027',
    );
    expect(portalLicenceLabel(licence(null), now)).toBe('Retail Point of Sale, key ending H8C5Z, never expires');
    expect(portalLicenceLabel(licence('2026-06-15T11:59:59Z'), now)).toBe('Retail Point of Sale, key ending H8C5Z, ended on 15 June 2026');
  });

  it('masks all but the prefix and the last group of a key', () => {
    expect(maskedKey('POS-7K3QM-X9D2R-TB4WN-H8C5Z')).toBe('POS-•••••-•••••-•••••-H8C5Z');
    expect(maskedKey('short')).toBe('•••••');
    expect(maskedKey(undefined)).toBe('');
  });

  it('explains DEACTIVATION_LIMIT_REACHED in plain words, with the next allowed time', () => {
    expect(deactivationLimitMessage({ max_deactivations_per_30_days: 1, next_allowed_at: '2027-01-31T10:00:00.000Z' })).toBe(
      'The machine is still bound: this licence lets you free a machine once in 30 days, and that has been used up. ' +
        'You can free one again after 2027-01-31 10:00 UTC, or contact support if you need it sooner.',
    );
    expect(deactivationLimitMessage({ max_deactivations_per_30_days: 3, next_allowed_at: '2027-01-31T10:00:00.000Z' })).toContain(
      'free a machine 3 times in 30 days',
    );
    expect(deactivationLimitMessage({ max_deactivations_per_30_days: 0, next_allowed_at: null })).toContain('cannot be freed here');
    expect(deactivationLimitMessage(undefined)).toContain('cannot be freed here');
  });
});
