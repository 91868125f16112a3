-- The locked load takes the licence's seat counter (license_seat_versions) first and returns it as the version.
-- v5: also the seats held by the licence's valid relay pools (not ended, not expired), which every seat change counts.
CREATE OR REPLACE FUNCTION license_for_seat_change(p_key varchar, p_lock boolean) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  lid int;
  timeout int;
BEGIN
  IF p_lock THEN
    SELECT l.id, license_heartbeat_timeout(p.default_policy, l.policy) INTO lid, timeout
      FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.license_key = p_key FOR UPDATE OF l;
    IF lid IS NOT NULL THEN
      INSERT INTO license_seat_versions AS v (license_id, version) VALUES (lid, 1)
        ON CONFLICT (license_id) DO UPDATE SET version = v.version + 1;
    END IF;
    IF lid IS NOT NULL AND timeout IS NOT NULL THEN
      PERFORM 1 FROM activations WHERE license_id = lid AND released_at IS NULL FOR UPDATE;
    END IF;
  ELSE
    SELECT l.id INTO lid FROM licenses l WHERE l.license_key = p_key;
  END IF;
  IF lid IS NULL THEN RETURN NULL; END IF;
  RETURN (
    SELECT json_build_object(
      'license', to_jsonb(l) - 'search_text', 'product', to_json(p), 'now', now(), 'version', coalesce((SELECT v.version FROM license_seat_versions v WHERE v.license_id = lid), 0)::text,
      'next_seat_id', nextval(pg_get_serial_sequence('activations', 'id')),
      'seats', coalesce((SELECT json_agg(s ORDER BY s.activated_at DESC, s.id DESC) FROM activations s
                         WHERE s.license_id = lid AND s.released_at IS NULL), '[]'::json),
      'pooled_seats', coalesce((SELECT sum(r.seats) FROM relay_pools r
                         WHERE r.license_id = lid AND r.ended_at IS NULL AND r.expires_at > now()), 0)::int,
      'recent_deactivations', coalesce((SELECT json_agg(a.released_at ORDER BY a.released_at) FROM activations a
                         WHERE a.license_id = lid AND a.release_reason = 'deactivated'
                           AND a.released_at > now() - interval '30 days'), '[]'::json))
    FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.id = lid);
END $$
