import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * The seat change's load takes a second argument, `p_lock`: true locks as before (the licence, and its live seats when
 * they can die); false reads without locking, for the optimistic path of an activation (docs/licences.md, Concurrency).
 * Either way it returns the licence row's version (`xmin`; a later migration returns a seat counter instead), which the activation's write compares so that a licence
 * changed, or given another seat, since the read makes the write do nothing.
 */
export class OptimisticSeatChange1797050000000 implements MigrationInterface {
  name = 'OptimisticSeatChange1797050000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION license_for_seat_change(varchar)`);
    await q.query(sqlFunction('license_for_seat_change.v3'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION license_for_seat_change(varchar, boolean)`);
    await q.query(sqlFunction('license_for_seat_change.v2'));
  }
}
