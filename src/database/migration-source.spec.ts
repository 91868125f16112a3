import { runInNewContext } from 'node:vm';
import { Query } from 'typeorm/driver/Query';
import { migrationFileName, migrationSource, MIGRATION_NAME, nextMigrationTimestamp } from './migration-source';

describe('generated migration source', () => {
  it('names the file after the timestamp and the kebab-cased name', () => {
    expect(migrationFileName('AddWebhookEndpoints', 1795500000001)).toBe('1795500000001-add-webhook-endpoints.ts');
    expect(migrationFileName('Keys2', 1)).toBe('1-keys2.ts');
  });

  it('dates a new migration now, or after the newest one when that is dated ahead', () => {
    expect(nextMigrationTimestamp(['InitialSchema1763780000000'], 1795444255326)).toBe(1795444255326);
    expect(nextMigrationTimestamp(['InitialSchema1763780000000', 'Later1795500000000'], 1795444255326)).toBe(1795500000001);
  });

  it('accepts PascalCase names only', () => {
    expect(MIGRATION_NAME.test('AddKeys')).toBe(true);
    for (const bad of ['addKeys', 'Add-Keys', 'Add Keys', '', '1Add']) expect(MIGRATION_NAME.test(bad)).toBe(false);
  });

  it('writes up in order and down in reverse, with SQL that survives a template literal', () => {
    const source = migrationSource('AddKeys', 42, {
      upQueries: [new Query('CREATE TABLE "keys" ("pem" text DEFAULT \'`${x}\\\\\')'), new Query('INSERT INTO t VALUES ($1)', ['a'])],
      downQueries: [new Query('DROP TABLE "keys"'), new Query('DELETE FROM t WHERE v = $1', ['a'])],
    });
    expect(source).toContain('export class AddKeys42 implements MigrationInterface');
    expect(source).toContain("name = 'AddKeys42';");
    const up = source.slice(source.indexOf('async up'), source.indexOf('async down'));
    const down = source.slice(source.indexOf('async down'));
    expect(up.indexOf('CREATE TABLE')).toBeLessThan(up.indexOf('INSERT INTO'));
    expect(up).toContain('await q.query(`INSERT INTO t VALUES ($1)`, ["a"]);');
    expect(down.indexOf('DELETE FROM')).toBeLessThan(down.indexOf('DROP TABLE'));
    // The template literal evaluates back to the original SQL.
    const literal = up.slice(up.indexOf('`'), up.indexOf('`);') + 1);
    expect(runInNewContext(literal)).toBe('CREATE TABLE "keys" ("pem" text DEFAULT \'`${x}\\\\\')');
  });
});
