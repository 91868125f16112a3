-- v1 with the merged heartbeat timeout from license_heartbeat_timeout and the product from product_catalog.
CREATE OR REPLACE FUNCTION license_for_seat_change(p_key varchar) RETURNS json LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  lid int;
  timeout int;
BEGIN
  SELECT l.id, license_heartbeat_timeout(p.default_policy, l.policy) INTO lid, timeout
    FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.license_key = p_key FOR UPDATE OF l;
  IF lid IS NULL THEN RETURN NULL; END IF;
  IF timeout IS NOT NULL THEN
    PERFORM 1 FROM activations WHERE license_id = lid AND released_at IS NULL FOR UPDATE;
  END IF;
  RETURN (
    SELECT json_build_object(
      'license', to_jsonb(l) - 'search_text', 'product', to_json(p), 'now', now(),
      'next_seat_id', nextval(pg_get_serial_sequence('activations', 'id')),
      'seats', coalesce((SELECT json_agg(s ORDER BY s.activated_at DESC, s.id DESC) FROM activations s
                         WHERE s.license_id = lid AND s.released_at IS NULL), '[]'::json),
      'recent_deactivations', coalesce((SELECT json_agg(a.released_at ORDER BY a.released_at) FROM activations a
                         WHERE a.license_id = lid AND a.release_reason = 'deactivated'
                           AND a.released_at > now() - interval '30 days'), '[]'::json))
    FROM licenses l JOIN product_catalog p ON p.id = l.product_id WHERE l.id = lid);
END $$
