import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMigrations, MIGRATION_FILE } from './migration-files';

describe('loadMigrations (every file in the folder, no hand-kept list)', () => {
  let dir: string;
  const migration = (className: string) =>
    `exports.${className} = class ${className} { async up() {} async down() {} };\nexports.HELPER = 'not a class';\n`;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'migrations-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads every migration file of its extension, in timestamp order, and nothing else', () => {
    writeFileSync(join(dir, '1796000000000-second.js'), migration('Second1796000000000'));
    writeFileSync(join(dir, '1795000000000-First.js'), migration('First1795000000000'));
    writeFileSync(join(dir, '1795000000000-First.js.map'), '{}');
    writeFileSync(join(dir, 'notes.js'), 'throw new Error("never loaded")');
    writeFileSync(join(dir, '1797000000000-other-extension.ts'), 'throw new Error("never loaded")');
    expect(loadMigrations(dir, '.js').map((cls) => cls.name)).toEqual(['First1795000000000', 'Second1796000000000']);
  });

  it('refuses a migration file that exports no migration class (rather than silently skipping it)', () => {
    writeFileSync(join(dir, '1795000000000-empty.js'), 'exports.up = async () => {};\n');
    expect(() => loadMigrations(dir, '.js')).toThrow(/must export exactly one migration class, found 0/);
  });

  it('refuses a file that exports two migration classes', () => {
    writeFileSync(join(dir, '1795000000000-two.js'), migration('A1795000000000') + migration('B1795000000000'));
    expect(() => loadMigrations(dir, '.js')).toThrow(/found 2/);
  });

  it('names files as both generators do', () => {
    expect(MIGRATION_FILE.test('1796630000000-product-ids.ts')).toBe(true); // npm run migration:generate
    expect(MIGRATION_FILE.test('1796700000000-AddColumn.ts')).toBe(true); // npx typeorm migration:generate
    expect(MIGRATION_FILE.test('1796700000000-add.d.ts')).toBe(false);
    expect(MIGRATION_FILE.test('1796700000000-add.spec.ts')).toBe(false);
  });
});
