import { validateSync } from 'class-validator';
import { codePointLength, MaxChars, MinChars } from './validators';

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
