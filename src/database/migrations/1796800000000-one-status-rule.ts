import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

/**
 * The licences module's SQL interface (docs/architecture.md, Database style; docs/licences.md, Status and grace):
 *
 * - `license_grace_end(expires_at, grace_days)`: grace days of 24 hours, computed on the UTC clock so the result
 *   never depends on the session's time zone. An inlinable SQL function now (it was plpgsql), IMMUTABLE, same results.
 * - `license_status(revoked, active, expires_at, grace_days, at)`: the one SQL definition of the derived status.
 * - `license_seat_limit(product default_limits, licence limits)`, `license_heartbeat_timeout(product default_policy,
 *   licence policy)` and `seat_is_dead(last_seen_at, timeout, at)`: the one SQL definition of the seat limit and of a
 *   dead seat.
 * - Views other modules read instead of the licences' tables: `usable_license_deadlines` (the expiry scan and the
 *   statistics' current hour), `license_products` (which product a licence belongs to) and `seat_history`; and the
 *   products module's `product_catalog`, which the licences module reads instead of the products table.
 * - The statistics' `license_stat_rows` takes the status flags from `license_status` (same rows, so the counters stay).
 */
export class OneStatusRule1796800000000 implements MigrationInterface {
  name = 'OneStatusRule1796800000000';

  async up(q: QueryRunner): Promise<void> {
    // src/database/sql/: license_grace_end.v2 (UTC wall clock, 24-hour days: timestamp + interval is IMMUTABLE).
    await q.query(sqlFunction('license_grace_end.v2'));
    await q.query(`REINDEX INDEX licenses_usable_grace_end_idx`);
    await q.query(sqlFunction('license_status.v1'));
    await q.query(sqlFunction('license_seat_limit.v1'));
    await q.query(sqlFunction('license_heartbeat_timeout.v1'));
    await q.query(sqlFunction('seat_is_dead.v1'));

    // Plain views: the planner flattens them, so the partial and expression indexes on licenses and activations still serve.
    await q.query(`
      CREATE VIEW usable_license_deadlines AS
        SELECT id AS license_id, product_id, expires_at, license_grace_end(expires_at, grace_days) AS grace_ends_at
        FROM licenses WHERE NOT revoked AND active AND expires_at IS NOT NULL`);
    await q.query(`CREATE VIEW license_products AS SELECT id AS license_id, product_id FROM licenses`);
    await q.query(`
      CREATE VIEW seat_history AS
        SELECT id AS seat_id, license_id, product_id, activated_at, released_at, release_reason FROM activations`);

    // The products module's read interface: what other modules may read of a product.
    await q.query(`
      CREATE VIEW product_catalog AS
        SELECT id, code, name, key_prefix, default_limits, default_policy, available_features, active, created_at, updated_at
        FROM products`);

    await q.query(sqlFunction('license_for_seat_change.v2'));
    // The statistics' per-licence rows take the flags' part of the status from license_status (the same rows as before).
    await q.query(sqlFunction('license_stat_rows.v3'));
  }

  async down(q: QueryRunner): Promise<void> {
    // license_stat_rows.v2 spelled its flags inline; the same rows as v3's (the property spec checks the revert).
    await q.query(sqlFunction('license_stat_rows.v2'));
    await q.query(sqlFunction('license_for_seat_change.v1'));
    await q.query(`DROP VIEW product_catalog, seat_history, license_products, usable_license_deadlines`);
    await q.query(`
      DROP FUNCTION seat_is_dead(timestamptz, int, timestamptz), license_heartbeat_timeout(jsonb, jsonb),
        license_seat_limit(jsonb, jsonb), license_status(boolean, boolean, timestamptz, int, timestamptz)`);
    await q.query(sqlFunction('license_grace_end.v1'));
    await q.query(`REINDEX INDEX licenses_usable_grace_end_idx`);
  }
}
