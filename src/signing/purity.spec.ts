import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What signing/ may not import (docs/signing.md, Where the code lives): it stays usable outside the server. */
const FORBIDDEN = [/^@nestjs\//, /^(node:)?fs(\/promises)?$/, /^typeorm$/, /\/config\//, /\/keyring\//, /\/database\//];

const importsOf = (source: string) => [...source.matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);

describe('signing/ is pure crypto', () => {
  const files = readdirSync(__dirname).filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'));

  it('has code to check', () => {
    expect(files).toEqual(expect.arrayContaining(['license-signature.ts', 'jwk.ts', 'signing.service.ts']));
  });

  it.each(files)('%s imports no Nest, file system, configuration, database or keyring', (name) => {
    const imports = importsOf(readFileSync(join(__dirname, name), 'utf8'));
    expect(imports.filter((path) => FORBIDDEN.some((rule) => rule.test(path)))).toEqual([]);
  });

  it('would catch a forbidden import (the check itself)', () => {
    const source = `import { Injectable } from '@nestjs/common';\nimport { readFileSync } from 'node:fs';\nimport x from '../config/app-config';`;
    expect(importsOf(source).filter((path) => FORBIDDEN.some((rule) => rule.test(path)))).toEqual([
      '@nestjs/common',
      'node:fs',
      '../config/app-config',
    ]);
  });
});
