import { MigrationInterface, QueryRunner } from 'typeorm';

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
    await q.query(seatChangeFunction(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(seatChangeFunction(false));
    await q.query(`DROP TABLE license_seat_versions`);
  }
}

/** license_for_seat_change(key, lock): with `versions`, the locked load takes the seat counter first and returns it. */
function seatChangeFunction(versions: boolean): string {
  const takeCounter = versions
    ? `
          IF lid IS NOT NULL THEN
            INSERT INTO license_seat_versions AS v (license_id, version) VALUES (lid, 1)
              ON CONFLICT (license_id) DO UPDATE SET version = v.version + 1;
          END IF;`
    : '';
  const version = versions ? `coalesce((SELECT v.version FROM license_seat_versions v WHERE v.license_id = lid), 0)::text` : 'l.xmin::text';
  return `
      CREATE OR REPLACE FUNCTION license_for_seat_change(p_key varchar, p_lock boolean) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        lid int;
        timeout int;
      BEGIN
        IF p_lock THEN
          SELECT l.id, license_heartbeat_timeout(p.default_policy, l.policy) INTO lid, timeout
            FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.license_key = p_key FOR UPDATE OF l;${takeCounter}
          IF lid IS NOT NULL AND timeout IS NOT NULL THEN
            PERFORM 1 FROM activations WHERE license_id = lid AND released_at IS NULL FOR UPDATE;
          END IF;
        ELSE
          SELECT l.id INTO lid FROM licenses l WHERE l.license_key = p_key;
        END IF;
        IF lid IS NULL THEN RETURN NULL; END IF;
        RETURN (
          SELECT json_build_object(
            'license', to_jsonb(l) - 'search_text', 'product', to_json(p), 'now', now(), 'version', ${version},
            'next_seat_id', nextval(pg_get_serial_sequence('activations', 'id')),
            'seats', coalesce((SELECT json_agg(s ORDER BY s.activated_at DESC, s.id DESC) FROM activations s
                               WHERE s.license_id = lid AND s.released_at IS NULL), '[]'::json),
            'recent_deactivations', coalesce((SELECT json_agg(a.released_at ORDER BY a.released_at) FROM activations a
                               WHERE a.license_id = lid AND a.release_reason = 'deactivated'
                                 AND a.released_at > now() - interval '30 days'), '[]'::json))
          FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.id = lid);
      END $$`;
}
