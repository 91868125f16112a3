import { CROCKFORD_ALPHABET, generateLicenseKey, LICENSE_KEY_PATTERN, normalizeLicenseKey } from './license-key';

describe('licence keys', () => {
  it('have the shape PREFIX-XXXXX-XXXXX-XXXXX-XXXXX', () => {
    const key = generateLicenseKey('POS');
    expect(key).toMatch(/^POS-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}$/);
    expect(key).toMatch(LICENSE_KEY_PATTERN);
  });

  it('use only the Crockford base32 alphabet (no I, L, O, U)', () => {
    expect(CROCKFORD_ALPHABET).toHaveLength(32);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) for (const c of generateLicenseKey('AB').slice(3).replace(/-/g, '')) seen.add(c);
    expect([...seen].sort().join('')).toBe([...CROCKFORD_ALPHABET].sort().join(''));
    expect([...seen].some((c) => 'ILOU'.includes(c))).toBe(false);
  });

  it('are unique over 100,000 keys', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 100_000; i++) keys.add(generateLicenseKey('ERP'));
    expect(keys.size).toBe(100_000);
  });

  it('spread characters evenly (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++)
      for (const c of generateLicenseKey('AB').slice(3).replace(/-/g, '')) counts.set(c, (counts.get(c) ?? 0) + 1);
    const expected = (n * 20) / 32;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.05);
  });

  it('are normalised on input: trimmed and upper-cased', () => {
    expect(normalizeLicenseKey('  pos-abcde-fghjk-mnpqr-stvwx \n')).toBe('POS-ABCDE-FGHJK-MNPQR-STVWX');
  });
});
