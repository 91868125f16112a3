import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * The optimistic activation's guard moves to a narrow table (docs/licences.md, Concurrency): `license_seat_versions`
 * holds one counter per licence, moved by every seat bound and taken first by every locked seat change, instead of
 * an update of the licence row itself (a new licence row version updates every index of the licences table).
 * license_for_seat_change returns that counter as `version` (0 for a licence without a row).
 */
export class SeatVersions1797051000000 implements MigrationInterface {
  name = 'SeatVersions1797051000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE license_seat_versions (
        license_id int NOT NULL CONSTRAINT license_seat_versions_pkey PRIMARY KEY
          CONSTRAINT license_seat_versions_license_fkey REFERENCES licenses(id) ON DELETE CASCADE,
        version bigint NOT NULL
      )`);
    await q.query(sqlFunction('license_for_seat_change.v4'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(sqlFunction('license_for_seat_change.v3'));
    await q.query(`DROP TABLE license_seat_versions`);
  }
}
