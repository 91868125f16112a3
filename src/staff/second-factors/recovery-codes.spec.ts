import { hashRecoveryCode, newRecoveryCodes, normaliseRecoveryCode, RECOVERY_CODE_COUNT } from './recovery-codes';
import { newTotpSecret, totpCode, totpStep } from './totp';

describe('recovery codes (docs/dashboard.md, Second factors)', () => {
  it('makes ten distinct codes of 16 unambiguous characters, read back however they are typed', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    expect(normaliseRecoveryCode(` ${codes[0].toLowerCase()} `)).toBe(codes[0].replace(/-/g, ''));
  });

  it('refuses what cannot be a code, and hashes with SHA-256', () => {
    for (const bad of ['', '123456', 'IIII-LLLL-OOOO-UUUU', 'A'.repeat(17), '\u0000'.repeat(16)])
      expect(normaliseRecoveryCode(bad)).toBeNull();
    expect(hashRecoveryCode('ABCD')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('TOTP (RFC 6238)', () => {
  it('accepts the current code and one step either side, and names its step', () => {
    const secret = newTotpSecret();
    const now = 1_800_000_000_000;
    const step = Math.floor(now / 30_000);
    expect(totpStep(secret, totpCode(secret, now), now)).toBe(step);
    expect(totpStep(secret, totpCode(secret, now - 30_000), now)).toBe(step - 1);
    expect(totpStep(secret, totpCode(secret, now + 30_000), now)).toBe(step + 1);
    expect(totpStep(secret, totpCode(secret, now - 90_000), now)).toBeNull();
    expect(totpStep(secret, 'abcdef', now)).toBeNull();
    expect(totpStep(secret, '1234567', now)).toBeNull();
  });

  it('matches the RFC 6238 SHA-1 test vector (the 20-byte ASCII secret "12345678901234567890")', () => {
    const secret = Buffer.from('12345678901234567890');
    // RFC 6238 Appendix B: T = 59 s gives 94287082 (8 digits); the 6-digit code is its last six digits.
    expect(totpCode(secret, 59_000)).toBe('287082');
    expect(totpCode(secret, 1_111_111_109_000)).toBe('081804');
  });
});
