import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';
import { StatsCounters1795323918361 } from './1795323918361-stats-counters';

/**
 * GET /stats as cheap at a million licences as at ten thousand (issue 24): the part of a read counted from the rows
 * themselves shrinks from up to half a day's events to at most half an hour's, and needs no lookup into licenses.
 *
 * - Every count that changes with the clock alone is an event at an instant, summed by UTC hour: a licence's expiry
 *   (`expires`) and grace end (`grace_ends`), a seat leaving the 30-day window (`activated_ends`, 30 days of 24 hours
 *   after activated_at) and a heartbeat release leaving it (`heartbeat_released_ends`). `activated` and
 *   `heartbeat_released` become undated totals, so the window is the total minus the ends that have passed: a read
 *   sums the hours before the current one (folded into one row) and counts the current hour's part from an index,
 *   whichever half of the hour is shorter. The releases by heartbeat were counted from all 30 days of rows before.
 * - activations.product_id, kept equal to its licence's by a foreign key on (license_id, product_id) with ON UPDATE
 *   CASCADE: the triggers and the window's edge read the product from the seat itself (an index-only scan). The insert
 *   paths write it; a licence moving to another product moves its seats, and their counters with them.
 * - stats_deltas.day (UTC date) becomes hour (UTC timestamp of the hour's start); the counters are rebuilt from the
 *   rows under the lock, so they are exact from the first read.
 */
export class StatsHourly1796500000000 implements MigrationInterface {
  name = 'StatsHourly1796500000000';

  async up(q: QueryRunner): Promise<void> {
    // No write may slip between the rebuild and the new triggers.
    await q.query(`LOCK TABLE licenses, activations IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`DROP TRIGGER licenses_stats_delete_seats ON licenses`);
    await q.query(`DROP TRIGGER seats_stats_update ON activations`);
    await q.query(`DROP FUNCTION licenses_stats_delete_seats()`);

    // The seats' product, from their licence.
    await q.query(`ALTER TABLE activations ADD COLUMN product_id int`);
    await q.query(`UPDATE activations a SET product_id = l.product_id FROM licenses l WHERE l.id = a.license_id`);
    await q.query(`ALTER TABLE activations ALTER COLUMN product_id SET NOT NULL`);
    await q.query(`ALTER TABLE licenses ADD CONSTRAINT licenses_id_product_key UNIQUE (id, product_id)`);
    await q.query(`ALTER TABLE activations DROP CONSTRAINT activations_license_id_fkey`);
    await q.query(`
      ALTER TABLE activations ADD CONSTRAINT activations_license_product_fkey FOREIGN KEY (license_id, product_id)
        REFERENCES licenses (id, product_id) ON DELETE CASCADE ON UPDATE CASCADE`);
    // The window's edges, read from the index alone.
    await q.query(`CREATE INDEX activations_activated_product_idx ON activations (activated_at) INCLUDE (product_id)`);
    await q.query(`DROP INDEX activations_activated_license_idx`);
    await q.query(`DROP INDEX activations_heartbeat_released_idx`);
    await q.query(
      `CREATE INDEX activations_heartbeat_released_idx ON activations (released_at) INCLUDE (product_id) WHERE release_reason = 'heartbeat_timeout'`,
    );

    // Hours instead of days (dropping the column drops the indexes that name it).
    await q.query(`TRUNCATE stats_deltas`);
    await q.query(`ALTER TABLE stats_deltas DROP COLUMN day`);
    await q.query(`ALTER TABLE stats_deltas ADD COLUMN hour timestamp`);
    await q.query(`CREATE INDEX stats_deltas_metric_hour_idx ON stats_deltas (metric, hour) INCLUDE (product_id, n)`);
    await q.query(`CREATE INDEX stats_deltas_undated_idx ON stats_deltas (product_id, metric) INCLUDE (n) WHERE hour IS NULL`);

    await q.query(`DROP FUNCTION license_stat_rows(int, text, boolean, boolean, timestamptz, int)`);
    await q.query(`DROP FUNCTION seat_stat_rows(int, timestamptz, timestamptz)`);
    await q.query(sqlFunction('license_stat_rows.v2'));
    // The window is 30 days of 24 hours (720 hours), as the read counts it: UTC has no daylight saving time.
    await q.query(sqlFunction('seat_stat_rows.v2'));
    const seatRows = (alias: string) =>
      `seat_stat_rows(${alias}.product_id, ${alias}.activated_at, ${alias}.released_at, ${alias}.release_reason)`;
    await q.query(sqlFunction('licenses_stats_insert.v2'));
    await q.query(sqlFunction('licenses_stats_delete.v2'));
    // A licence moving to another product moves its seats by ON UPDATE CASCADE: their own trigger moves their counters.
    await q.query(sqlFunction('licenses_stats_update.v2'));
    // Seats deleted with their licence (ON DELETE CASCADE) reach this trigger too, their product on the row.
    await q.query(sqlFunction('seats_stats_insert.v2'));
    await q.query(sqlFunction('seats_stats_delete.v2'));
    await q.query(sqlFunction('seats_stats_update.v2'));
    await q.query(sqlFunction('stats_truncate.v2'));
    const seatCounted = ['product_id', 'activated_at', 'released_at', 'release_reason'];
    const changed = (cols: string[]) =>
      `(${cols.map((c) => `OLD.${c}`).join(', ')}) IS DISTINCT FROM (${cols.map((c) => `NEW.${c}`).join(', ')})`;
    await q.query(
      `CREATE TRIGGER seats_stats_update AFTER UPDATE OF ${seatCounted.join(', ')} ON activations FOR EACH ROW WHEN (${changed(seatCounted)}) EXECUTE FUNCTION seats_stats_update()`,
    );

    await q.query(`
      INSERT INTO stats_deltas (product_id, metric, hour, n)
      SELECT s.product_id, s.metric, s.hour, count(*) FROM licenses l
      CROSS JOIN LATERAL license_stat_rows(l.product_id, l.license_type, l.revoked, l.active, l.expires_at, l.grace_days) s
      GROUP BY 1, 2, 3`);
    await q.query(`
      INSERT INTO stats_deltas (product_id, metric, hour, n)
      SELECT s.product_id, s.metric, s.hour, count(*) FROM activations a CROSS JOIN LATERAL ${seatRows('a')} s
      GROUP BY 1, 2, 3`);
  }

  /** Back to day buckets: the counters rebuilt from the rows by the original migration, then what the later ones added. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`LOCK TABLE licenses, activations IN SHARE ROW EXCLUSIVE MODE`);
    const counters = new StatsCounters1795323918361();
    await q.query(`DROP FUNCTION seat_stat_rows(int, timestamptz, timestamptz, text)`);
    await counters.down(q);
    await q.query(`DROP INDEX activations_activated_product_idx, activations_heartbeat_released_idx`);
    await q.query(
      `CREATE INDEX activations_heartbeat_released_idx ON activations (released_at) WHERE release_reason = 'heartbeat_timeout'`,
    );
    await q.query(`ALTER TABLE activations DROP CONSTRAINT activations_license_product_fkey`);
    await q.query(
      `ALTER TABLE activations ADD CONSTRAINT activations_license_id_fkey FOREIGN KEY (license_id) REFERENCES licenses (id) ON DELETE CASCADE`,
    );
    await q.query(`ALTER TABLE activations DROP COLUMN product_id`);
    await q.query(`ALTER TABLE licenses DROP CONSTRAINT licenses_id_product_key`);
    await counters.up(q);
    // StatsReadIndexes and EntitiesDescribeSchema.
    await q.query(`CREATE INDEX stats_deltas_undated_idx ON stats_deltas (product_id, metric) INCLUDE (n) WHERE day IS NULL`);
    await q.query(`CREATE INDEX activations_activated_license_idx ON activations (activated_at) INCLUDE (license_id)`);
    await q.query(`ALTER TABLE stats_deltas ADD COLUMN id bigserial PRIMARY KEY`);
  }
}
