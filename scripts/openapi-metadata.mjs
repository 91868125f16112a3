// Regenerates src/metadata.ts: the @nestjs/swagger CLI plugin's metadata (types, required, nullable, enums,
// class-validator limits and JSDoc of DTOs), computed once with the TypeScript compiler and committed, so SWC
// builds and Jest load it with SwaggerModule.loadPluginMetadata instead of running the plugin on every compile.
// Usage: node scripts/openapi-metadata.mjs          (write src/metadata.ts)
//        node scripts/openapi-metadata.mjs --check  (fail when the committed file is stale)
import { PluginMetadataGenerator } from '@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator.js';
import { ReadonlyVisitor } from '@nestjs/swagger/plugin';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const target = join(src, 'metadata.ts');
const check = process.argv.includes('--check');
process.chdir(root);

/** The build's program without the file being generated, so a stale or broken metadata.ts never stops its own repair. */
function sourceProgram() {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  return ts.createProgram({ options: parsed.options, rootNames: parsed.fileNames.filter((f) => resolve(f) !== target) });
}

// The generated imports are relative to outputDir, so a check generates for src/ and then moves the text aside.
const outputDir = check ? mkdtempSync(join(tmpdir(), 'openapi-metadata-')) : src;
new PluginMetadataGenerator().generate({
  visitors: [
    new ReadonlyVisitor({
      pathToSource: src,
      introspectComments: true,
      classValidatorShim: true,
      // DTOs only: entities never reach the API.
      dtoFileNameSuffix: ['.dto.ts', '.query.ts'],
      controllerFileNameSuffix: ['.controller.ts'],
    }),
  ],
  outputDir,
  tsProgramRef: sourceProgram(),
});

// With "module": "node20" a dynamic import() is resolved as ESM, which needs the file extension (Jest maps it back).
const generated = join(outputDir, 'metadata.ts');
writeFileSync(generated, readFileSync(generated, 'utf8').replace(/import\("(\.{1,2}\/[^"]+?)(?<!\.js)"\)/g, 'import("$1.js")'));

if (check) {
  const fresh = readFileSync(generated, 'utf8');
  rmSync(outputDir, { recursive: true, force: true });
  const committed = readFileSync(target, 'utf8');
  if (fresh !== committed) {
    console.error('src/metadata.ts is out of date: run `npm run openapi:metadata` and commit the result.');
    process.exit(1);
  }
  console.log('src/metadata.ts is up to date.');
}
