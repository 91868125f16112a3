import { isValidPib, normalizeFingerprint } from './license-fields';

describe('isValidPib', () => {
  it.each(['101134702', '100142542', '100372193'])('accepts %s', (pib) => expect(isValidPib(pib)).toBe(true));

  it.each([
    ['a wrong check digit', '101134701'],
    ['a leading zero', '012345674'],
    ['8 digits', '10113470'],
    ['10 digits', '1011347020'],
    ['a separator', '10113470-2'],
    ['spaces', '101 134 702'],
    ['letters', '10113470A'],
    ['empty', ''],
  ])('rejects %s (%s)', (_label, pib) => expect(isValidPib(pib)).toBe(false));

  it('rejects a number', () => expect(isValidPib(101134702)).toBe(false));
});

describe('normalizeFingerprint', () => {
  const hex = 'ab'.repeat(32);
  it('lower-cases upper-case hex digests', () =>
    expect(normalizeFingerprint({ value: `sha256:${hex.toUpperCase()}` })).toBe(`sha256:${hex}`));
  it('keeps valid ones', () => expect(normalizeFingerprint({ value: `sha256:${hex}` })).toBe(`sha256:${hex}`));
  it.each([`SHA256:${hex}`, `sha256:${hex}0`, 'x', 42, null])('leaves %p for validation to reject', (value) =>
    expect(normalizeFingerprint({ value })).toBe(value),
  );
});
