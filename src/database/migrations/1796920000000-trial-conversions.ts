import { MigrationInterface, QueryRunner } from 'typeorm';

/** A licence issued after a trial of its product for the same e-mail names that trial's licence (docs/licences.md, Trials). */
export class TrialConversions1796920000000 implements MigrationInterface {
  name = 'TrialConversions1796920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE licenses ADD COLUMN converted_from int`);
    await q.query(`ALTER TABLE licenses ADD CONSTRAINT licenses_converted_from_fkey FOREIGN KEY (converted_from) REFERENCES licenses (id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE licenses DROP COLUMN converted_from`);
  }
}
