import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** `npm run lint:deps` as CI runs it (docs/architecture.md, Module boundaries), on any tree laid out like src/. */
const ROOT = join(__dirname, '..');
const checkBoundaries = (cwd: string) => {
  const depcruise = join(ROOT, 'node_modules/.bin/depcruise');
  const command = `"${depcruise}" src --config "${join(ROOT, '.dependency-cruiser.cjs')}" --output-type json | node "${join(ROOT, 'scripts/check-boundaries.mjs')}"`;
  const run = spawnSync('sh', ['-c', command], { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
};

/** A throw-away project: a tsconfig and the given files under src/. */
const project = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'boundaries-'));
  writeFileSync(join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": true } }');
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), `${source}\nexport const marker = 1;\n`);
  }
  return dir;
};

describe('module boundaries (npm run lint:deps)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('hold for this repository', () => {
    const run = checkBoundaries(ROOT);
    expect(run.output).toMatch(/module boundaries: \d+ files, 0 problem\(s\)/);
    expect(run.status).toBe(0);
  }, 60_000);

  it('let through what the rules allow: features on common/ and services, common/ on config/, type-only cycles', () => {
    const dir = project({
      'config/app-config.ts': "import type { Schema } from './env.schema';",
      'config/env.schema.ts': "import { marker } from './app-config';",
      'common/throttling.ts': "import { marker } from '../config/app-config';",
      'licenses/licenses.repository.ts': "import { marker } from '../common/throttling';",
      'licenses/licenses.service.ts': "import { marker } from './licenses.repository';",
      'dashboard/pages.controller.ts': "import { marker } from '../licenses/licenses.service';",
      'signing/sign.ts': "import { createSign } from 'node:crypto';\nimport { marker } from './jwk';",
      'signing/jwk.ts': '',
    });
    dirs.push(dir);
    const run = checkBoundaries(dir);
    expect(run.output).toContain('0 problem(s)');
    expect(run.status).toBe(0);
  }, 60_000);

  describe('catch a module that crosses them', () => {
    let run: { status: number | null; output: string };
    beforeAll(() => {
      const dir = project({
        'signing/sign.ts': "import { marker } from '../common/limit';",
        'signing/keys.ts': "import { readFileSync } from 'node:fs';\nimport { Injectable } from '@nestjs/common';",
        'common/limit.ts': "import { marker } from '../audit/event-recorder';",
        'audit/event-recorder.ts': '',
        'licenses/licenses.repository.ts': '',
        'dashboard/pages.controller.ts': "import { marker } from '../licenses/licenses.repository';",
        // A folder cycle made of files that form no file cycle, one end in a subfolder.
        'products/products.service.ts': "import { marker } from '../auth/dto/token.dto';",
        'auth/dto/token.dto.ts': '',
        'auth/tokens.service.ts': "import { marker } from '../products/product.entity';",
        'products/product.entity.ts': '',
        'webhooks/a.ts': "import { marker } from './b';",
        'webhooks/b.ts': "import { marker } from './a';",
      });
      dirs.push(dir);
      run = checkBoundaries(dir);
    }, 60_000);

    it('fails the check', () => expect(run.status).toBe(1));

    it.each([
      ['signing/ importing another src folder', 'signing-is-pure: src/signing/sign.ts → src/common/limit.ts'],
      ['signing/ reading files', 'signing-no-framework: src/signing/keys.ts → fs'],
      ['signing/ using Nest', 'signing-no-framework: src/signing/keys.ts → @nestjs/common'],
      ['common/ importing a feature', 'common-knows-no-feature: src/common/limit.ts → src/audit/event-recorder.ts'],
      [
        'the dashboard reaching into a repository',
        'repository-stays-home: src/dashboard/pages.controller.ts → src/licenses/licenses.repository.ts',
      ],
      ['two folders importing each other', 'no-folder-cycle: {auth, products} import each other'],
      ['two files importing each other', 'no-file-cycle: src/webhooks/a.ts → src/webhooks/b.ts'],
    ])('%s', (_, message) => expect(run.output).toContain(message));
  });
});
