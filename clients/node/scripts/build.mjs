// The package's two builds from one source: ES modules (dist/esm) and CommonJS (dist/cjs), each with its types.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.cjs.json'], { stdio: 'inherit' });
// The "type" of the nearest package.json decides how Node and TypeScript read dist/cjs/*.js and *.d.ts.
writeFileSync('dist/cjs/package.json', '{\n  "type": "commonjs"\n}\n');
