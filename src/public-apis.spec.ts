import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Frameworks through their public APIs only (docs/performance.md, Framework seams): a minor upgrade must not break us silently. */
const root = join(__dirname, '..');
const sources = (dir: string): string[] =>
  readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts') && !name.endsWith('.d.ts') && name !== 'metadata.ts')
    .map((name) => join(dir, name));
const files = [...sources('src'), ...sources('scripts'), ...sources('bench'), 'ormconfig.ts'];

// A value import of a file inside these packages (type-only imports vanish at run time and tsc checks them).
const PRIVATE_IMPORT = /^import (?!type )[^;]*? from '(class-transformer|class-validator|express|typeorm|@nestjs\/[\w-]+)\/[^']+';/gm;
const privateImports = (source: string) => [...source.matchAll(PRIVATE_IMPORT)].map((m) => m[0]);
/** The one documented seam into Nest's route-argument metadata (docs/performance.md, Framework seams), guarded by its spec. */
const SEAMS: Record<string, string[]> = {
  'src/common/http/empty-body.ts': [
    `import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';`,
    `import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';`,
  ],
  // The paths of @RawBodyRoute routes, read before routing (docs/stores.md, Raw bodies); raw-body.spec.ts guards it.
  'src/common/http/raw-body.ts': [`import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';`],
  // Each dashboard route's `METHOD /path` for its role rule (docs/dashboard.md, Staff and roles); test/dashboard-roles.e2e-spec.ts
  // walks every registered route through it, so a change in Nest's metadata fails there.
  'src/dashboard/http/route-rules.ts': [`import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';`],
};

describe('public framework APIs only', () => {
  it('has files to check', () => expect(files.length).toBeGreaterThan(100));

  it.each(files)('%s imports no private file of class-transformer, class-validator, Express, TypeORM or Nest', (file) => {
    expect(privateImports(readFileSync(join(root, file), 'utf8'))).toEqual(SEAMS[file] ?? []);
  });

  it('nothing rearranges Express router stacks, and only database/pg-pool.ts reaches into the TypeORM driver', () => {
    const offenders = files.filter((file) => {
      const source = readFileSync(join(root, file), 'utf8');
      return (
        /\.stack\.(push|splice|unshift)|router\.stack/.test(source) ||
        (/driver[^\n]*\.master\b/.test(source) && !file.endsWith('pg-pool.ts'))
      );
    });
    expect(offenders.map((file) => relative(root, join(root, file)))).toEqual([]);
  });

  it('would catch a private import (the check itself)', () => {
    const source = `import { defaultMetadataStorage } from 'class-transformer/cjs/storage';\nimport type { Query } from 'typeorm/driver/Query';\n`;
    expect(privateImports(source)).toEqual([`import { defaultMetadataStorage } from 'class-transformer/cjs/storage';`]);
  });
});
