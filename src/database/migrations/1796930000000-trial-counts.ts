import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The licences module's read interface for statistics of trials (docs/licences.md, Statistics): per product, trials
 * started and trials converted (a later licence names the trial's licence as converted_from).
 */
export class TrialCounts1796930000000 implements MigrationInterface {
  name = 'TrialCounts1796930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE VIEW trial_counts AS
        SELECT t.product_id, count(*) AS started,
               count(*) FILTER (WHERE EXISTS (SELECT 1 FROM licenses c WHERE c.converted_from = t.license_id)) AS converted
        FROM trials t GROUP BY t.product_id`);
    // Finds a trial's conversions without scanning the licences.
    await q.query(`CREATE INDEX licenses_converted_from_idx ON licenses (converted_from) WHERE converted_from IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP VIEW trial_counts`);
    await q.query(`DROP INDEX licenses_converted_from_idx`);
  }
}
