import { validateSync } from 'class-validator';
import { codePointLength, cutToCodePoints, MaxChars, MinChars } from './validators';

class Named {
  @MinChars(1)
  @MaxChars(3)
  name!: unknown;
}

const problems = (name: unknown) => validateSync(Object.assign(new Named(), { name })).flatMap((e) => Object.values(e.constraints ?? {}));

describe('text length in code points (as varchar(n) counts)', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['\u2764\uFE0F', 2], // a character and its variation selector: two code points, one for validator.js
    ['\u{1F600}', 1], // outside the BMP: one code point, two UTF-16 units
    ['e\u0301', 2], // a combining accent counts on its own
  ])('codePointLength(%j) = %i', (text, length) => expect(codePointLength(text)).toBe(length));

  it('MaxChars and MinChars count code points and keep class-validator messages', () => {
    expect(problems('\u{1F600}'.repeat(3))).toEqual([]);
    expect(problems('\u2764\uFE0F'.repeat(2))).toEqual(['name must be shorter than or equal to 3 characters']);
    expect(problems('')).toEqual(['name must be longer than or equal to 1 characters']);
    expect(problems(42)).toHaveLength(2);
  });
});

describe('cutToCodePoints', () => {
  it('keeps at most max code points and never splits a surrogate pair', () => {
    expect(cutToCodePoints('abc', 5)).toBe('abc');
    expect(cutToCodePoints('abcdef', 3)).toBe('abc');
    // Each emoji is one code point of two UTF-16 units: a cut at 2 keeps two whole emoji, not one and a half.
    expect(cutToCodePoints('😀😀😀', 2)).toBe('😀😀');
    expect(cutToCodePoints('a😀b', 2)).toBe('a😀');
    expect(cutToCodePoints(`${'x'.repeat(199)}😀tail`, 200)).toBe(`${'x'.repeat(199)}😀`);
    expect([...cutToCodePoints('😀'.repeat(300), 200)]).toHaveLength(200);
  });
});
