import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * Statistics at any scale without a cache: every licence and seat change appends its contribution
 * (+1/-1 per product and metric, by UTC day for the time-based ones) to stats_deltas, by triggers in
 * the writing transaction, so the counts are exactly as current as the data they summarise. Reading
 * them sums a few thousand rows instead of scanning every licence. StatsRepository folds the deltas
 * from time to time; the day buckets of "today" are counted from the rows (indexed) at read time.
 *
 * Metrics: `type:<TYPE>` and `revoked` / `suspended` / `usable` per licence; for usable licences with
 * an expiry, `expires` and `grace_ends` by UTC day; per seat, `seats` while current and `activated`
 * by UTC day of activated_at.
 */
export class StatsCounters1795323918361 implements MigrationInterface {
  name = 'StatsCounters1795323918361';

  async up(q: QueryRunner): Promise<void> {
    // No write may slip between the backfill and the triggers.
    await q.query(`LOCK TABLE licenses, activations IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`
      CREATE TABLE stats_deltas (
        product_id int NOT NULL,
        metric varchar(24) NOT NULL,
        day date,
        n bigint NOT NULL
      )`);
    await q.query(`CREATE INDEX stats_deltas_metric_day_idx ON stats_deltas (metric, day)`);

    // expires_at + grace_days as 24-hour days (the rule of deriveLicenseStatus). plpgsql, not SQL: an inlined
    // timestamptz + interval is only STABLE, while hours alone never depend on the time zone.
    await q.query(sqlFunction('license_grace_end.v1'));
    await q.query(sqlFunction('license_stat_rows.v1'));
    await q.query(sqlFunction('seat_stat_rows.v1'));

    // Licences: whole statements at a time (bulk imports add one delta per metric, not per row); an UPDATE
    // only when a counted column changed (the WHEN clause costs nothing otherwise).
    await q.query(sqlFunction('licenses_stats_insert.v1'));
    await q.query(sqlFunction('licenses_stats_delete.v1'));
    // A deleted licence takes its seats along (ON DELETE CASCADE), after which their product is unknown:
    // subtract them here, while the licence still exists; the seats' own trigger then skips them.
    await q.query(sqlFunction('licenses_stats_delete_seats.v1'));
    await q.query(sqlFunction('licenses_stats_update.v1'));
    await q.query(sqlFunction('seats_stats_insert.v1'));
    // The join skips seats whose licence was deleted by the same statement (already subtracted above).
    await q.query(sqlFunction('seats_stats_delete.v1'));
    await q.query(sqlFunction('seats_stats_update.v1'));
    await q.query(sqlFunction('stats_truncate.v1'));

    const licenseCounted = ['product_id', 'license_type', 'revoked', 'active', 'expires_at', 'grace_days'];
    const seatCounted = ['license_id', 'activated_at', 'released_at'];
    const changed = (cols: string[]) =>
      `(${cols.map((c) => `OLD.${c}`).join(', ')}) IS DISTINCT FROM (${cols.map((c) => `NEW.${c}`).join(', ')})`;
    await q.query(
      `CREATE TRIGGER licenses_stats_insert AFTER INSERT ON licenses REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION licenses_stats_insert()`,
    );
    await q.query(
      `CREATE TRIGGER licenses_stats_delete AFTER DELETE ON licenses REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION licenses_stats_delete()`,
    );
    await q.query(
      `CREATE TRIGGER licenses_stats_delete_seats BEFORE DELETE ON licenses FOR EACH ROW EXECUTE FUNCTION licenses_stats_delete_seats()`,
    );
    await q.query(
      `CREATE TRIGGER licenses_stats_update AFTER UPDATE OF ${licenseCounted.join(', ')} ON licenses FOR EACH ROW WHEN (${changed(licenseCounted)}) EXECUTE FUNCTION licenses_stats_update()`,
    );
    await q.query(`CREATE TRIGGER licenses_stats_truncate AFTER TRUNCATE ON licenses FOR EACH STATEMENT EXECUTE FUNCTION stats_truncate()`);
    await q.query(
      `CREATE TRIGGER seats_stats_insert AFTER INSERT ON activations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION seats_stats_insert()`,
    );
    await q.query(
      `CREATE TRIGGER seats_stats_delete AFTER DELETE ON activations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION seats_stats_delete()`,
    );
    await q.query(
      `CREATE TRIGGER seats_stats_update AFTER UPDATE OF ${seatCounted.join(', ')} ON activations FOR EACH ROW WHEN (${changed(seatCounted)}) EXECUTE FUNCTION seats_stats_update()`,
    );
    await q.query(`CREATE TRIGGER seats_stats_truncate AFTER TRUNCATE ON activations FOR EACH STATEMENT EXECUTE FUNCTION stats_truncate()`);

    // Today's part of the day buckets is counted from the rows: these keep that to one day's worth of index,
    // read without visiting the table (an index-only scan needs every column the query names).
    await q.query(
      `CREATE INDEX licenses_usable_expires_idx ON licenses (expires_at) INCLUDE (product_id) WHERE NOT revoked AND active AND expires_at IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX licenses_usable_grace_end_idx ON licenses (license_grace_end(expires_at, grace_days)) INCLUDE (product_id, expires_at, grace_days) WHERE NOT revoked AND active AND expires_at IS NOT NULL`,
    );

    await q.query(`
      INSERT INTO stats_deltas (product_id, metric, day, n)
      SELECT s.product_id, s.metric, s.day, count(*) FROM licenses l
      CROSS JOIN LATERAL license_stat_rows(l.product_id, l.license_type, l.revoked, l.active, l.expires_at, l.grace_days) s
      GROUP BY 1, 2, 3`);
    await q.query(`
      INSERT INTO stats_deltas (product_id, metric, day, n)
      SELECT s.product_id, s.metric, s.day, count(*) FROM activations a JOIN licenses l ON l.id = a.license_id
      CROSS JOIN LATERAL seat_stat_rows(l.product_id, a.activated_at, a.released_at) s
      GROUP BY 1, 2, 3`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [trigger, table] of [
      ['licenses_stats_insert', 'licenses'],
      ['licenses_stats_delete', 'licenses'],
      ['licenses_stats_delete_seats', 'licenses'],
      ['licenses_stats_update', 'licenses'],
      ['licenses_stats_truncate', 'licenses'],
      ['seats_stats_insert', 'activations'],
      ['seats_stats_delete', 'activations'],
      ['seats_stats_update', 'activations'],
      ['seats_stats_truncate', 'activations'],
    ]) {
      await q.query(`DROP TRIGGER IF EXISTS ${trigger} ON ${table}`);
    }
    await q.query(`DROP INDEX IF EXISTS licenses_usable_expires_idx, licenses_usable_grace_end_idx`);
    await q.query(`DROP TABLE IF EXISTS stats_deltas`);
    await q.query(`
      DROP FUNCTION IF EXISTS licenses_stats_insert(), licenses_stats_delete(), licenses_stats_delete_seats(), licenses_stats_update(),
        seats_stats_insert(), seats_stats_delete(), seats_stats_update(), stats_truncate(),
        license_stat_rows(int, text, boolean, boolean, timestamptz, int), seat_stat_rows(int, timestamptz, timestamptz),
        license_grace_end(timestamptz, int)`);
  }
}
