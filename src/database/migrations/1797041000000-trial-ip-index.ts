import { MigrationInterface, QueryRunner } from 'typeorm';

/** Trials by the IP that started them (docs/licences.md, Trials): the licence list's trial_ip filter. */
export class TrialIpIndex1797041000000 implements MigrationInterface {
  name = 'TrialIpIndex1797041000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX trials_ip_idx ON trials (ip, created_at) WHERE ip IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX trials_ip_idx`);
  }
}
