import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * The staff search (docs/dashboard.md): accent- and case-insensitive customer search ("muller" finds
 * "Müller"), the key with or without dashes, the PIB, and machines by hostname or fingerprint prefix.
 *
 * - license_search_fold(text): lower-case without accents. unaccent() ships with the embedded PostgreSQL;
 *   where a managed server refuses the extension, a translate() of the Latin letters stands in. Both are
 *   IMMUTABLE, so the needle and the stored text are always folded the same way.
 * - licenses.search_text stops being a generated column (TypeORM's schema diff cannot compare generated
 *   columns in cloned databases): a trigger keeps it, now folded and with the dashless key and the PIB.
 * - activations: a prefix index on the fingerprint and a trigram index on the hostname (when pg_trgm exists).
 */
export class StaffSearch1796300000000 implements MigrationInterface {
  name = 'StaffSearch1796300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(sqlFunction('license_search_fold.v1'));

    await q.query(`ALTER TABLE licenses ALTER COLUMN search_text DROP EXPRESSION`);
    // No longer generated: TypeORM's record of the expression goes too (the table stays, for any later generated column).
    await q.query(`DELETE FROM typeorm_metadata WHERE "type" = 'GENERATED_COLUMN' AND "table" = 'licenses' AND "name" = 'search_text'`);
    await q.query(sqlFunction('licenses_search_text.v1'));
    await q.query(`
      CREATE TRIGGER licenses_search_text BEFORE INSERT OR UPDATE OF customer_name, customer_email, customer_pib, license_key
      ON licenses FOR EACH ROW EXECUTE FUNCTION licenses_search_text()`);
    // Fires the trigger once per row: the one-off rewrite of the table.
    await q.query(`UPDATE licenses SET license_key = license_key`);
    await q.query(`ALTER TABLE licenses ALTER COLUMN search_text SET NOT NULL`);

    await q.query(`CREATE INDEX activations_fingerprint_prefix_idx ON activations (machine_fingerprint varchar_pattern_ops)`);
    await q.query(`
      DO $$ BEGIN
        CREATE INDEX activations_hostname_trgm_idx ON activations USING gin (lower(hostname) gin_trgm_ops);
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm unavailable (%); hostname search will scan', SQLERRM;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS activations_hostname_trgm_idx`);
    await q.query(`DROP INDEX activations_fingerprint_prefix_idx`);
    await q.query(`DROP TRIGGER licenses_search_text ON licenses`);
    await q.query(`DROP FUNCTION licenses_search_text()`);
    await q.query(`DROP INDEX IF EXISTS licenses_search_trgm_idx`);
    await q.query(`ALTER TABLE licenses DROP COLUMN search_text`);
    await q.query(`
      ALTER TABLE licenses ADD COLUMN search_text text
        GENERATED ALWAYS AS (lower(customer_name || ' ' || coalesce(customer_email, '') || ' ' || license_key)) STORED`);
    await q.query(
      `INSERT INTO typeorm_metadata ("type", "database", "schema", "table", "name", "value")
       VALUES ('GENERATED_COLUMN', current_database(), current_schema(), 'licenses', 'search_text', $1)`,
      [`lower(customer_name || ' ' || coalesce(customer_email, '') || ' ' || license_key)`],
    );
    await q.query(`
      DO $$ BEGIN
        CREATE INDEX licenses_search_trgm_idx ON licenses USING gin (search_text gin_trgm_ops);
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm unavailable (%)', SQLERRM;
      END $$`);
    await q.query(`DROP FUNCTION license_search_fold(text)`);
  }
}
