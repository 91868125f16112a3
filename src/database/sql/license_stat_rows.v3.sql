-- v2 with the flags taken from license_status (the same rows).
CREATE OR REPLACE FUNCTION license_stat_rows(p_product int, p_type text, p_revoked boolean, p_active boolean, p_expires timestamptz, p_grace int)
RETURNS TABLE (product_id int, metric text, hour timestamp) LANGUAGE sql IMMUTABLE AS $$
  SELECT p_product, 'type:' || p_type, NULL::timestamp
  UNION ALL SELECT p_product, CASE WHEN f.flags = 'active' THEN 'usable' ELSE f.flags END, NULL::timestamp FROM (SELECT license_status(p_revoked, p_active, NULL, p_grace, NULL) AS flags) f
  UNION ALL SELECT p_product, 'expires', date_trunc('hour', p_expires AT TIME ZONE 'UTC') FROM (SELECT license_status(p_revoked, p_active, NULL, p_grace, NULL) AS flags) f
    WHERE f.flags = 'active' AND p_expires IS NOT NULL
  UNION ALL SELECT p_product, 'grace_ends', date_trunc('hour', license_grace_end(p_expires, p_grace) AT TIME ZONE 'UTC')
    FROM (SELECT license_status(p_revoked, p_active, NULL, p_grace, NULL) AS flags) f WHERE f.flags = 'active' AND p_expires IS NOT NULL
$$
