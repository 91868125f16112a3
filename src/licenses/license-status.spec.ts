import { deriveLicenseStatus, graceEndsAt, StatusFields } from './license-status';

describe('deriveLicenseStatus', () => {
  const expiresAt = new Date('2026-06-01T00:00:00.000Z');
  const base: StatusFields = { revoked: false, active: true, expiresAt, graceDays: 7 };
  const at = (iso: string) => new Date(iso);

  it('is active before expiry and exactly at expires_at', () => {
    expect(deriveLicenseStatus(base, at('2026-05-01T00:00:00Z'))).toBe('active');
    expect(deriveLicenseStatus(base, expiresAt)).toBe('active');
  });

  it('is grace just after expiry, inside the grace days, and exactly at the end of grace', () => {
    expect(deriveLicenseStatus(base, at('2026-06-01T00:00:00.001Z'))).toBe('grace');
    expect(deriveLicenseStatus(base, at('2026-06-05T00:00:00Z'))).toBe('grace');
    expect(deriveLicenseStatus(base, at('2026-06-08T00:00:00Z'))).toBe('grace');
  });

  it('is expired one second after grace', () => {
    expect(deriveLicenseStatus(base, at('2026-06-08T00:00:01Z'))).toBe('expired');
  });

  it('with grace_days 0 goes straight from active to expired', () => {
    const noGrace = { ...base, graceDays: 0 };
    expect(deriveLicenseStatus(noGrace, expiresAt)).toBe('active');
    expect(deriveLicenseStatus(noGrace, at('2026-06-01T00:00:01Z'))).toBe('expired');
  });

  it('never expires without expires_at', () => {
    expect(deriveLicenseStatus({ ...base, expiresAt: null }, at('2999-01-01T00:00:00Z'))).toBe('active');
    expect(graceEndsAt({ expiresAt: null, graceDays: 7 })).toBeNull();
  });

  it('applies the precedence revoked > suspended > expired > grace > active', () => {
    const late = at('2030-01-01T00:00:00Z');
    expect(deriveLicenseStatus({ ...base, revoked: true, active: false }, late)).toBe('revoked');
    expect(deriveLicenseStatus({ ...base, active: false }, late)).toBe('suspended');
    expect(deriveLicenseStatus(base, late)).toBe('expired');
  });

  it('computes the end of grace', () => {
    expect(graceEndsAt(base)?.toISOString()).toBe('2026-06-08T00:00:00.000Z');
  });
});
