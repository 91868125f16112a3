-- v1 by UTC hour: expiries and grace ends as events of their hour.
CREATE OR REPLACE FUNCTION license_stat_rows(p_product int, p_type text, p_revoked boolean, p_active boolean, p_expires timestamptz, p_grace int)
RETURNS TABLE (product_id int, metric text, hour timestamp) LANGUAGE sql IMMUTABLE AS $$
  SELECT p_product, 'type:' || p_type, NULL::timestamp
  UNION ALL SELECT p_product, CASE WHEN p_revoked THEN 'revoked' WHEN NOT p_active THEN 'suspended' ELSE 'usable' END, NULL::timestamp
  UNION ALL SELECT p_product, 'expires', date_trunc('hour', p_expires AT TIME ZONE 'UTC')
    WHERE NOT p_revoked AND p_active AND p_expires IS NOT NULL
  UNION ALL SELECT p_product, 'grace_ends', date_trunc('hour', license_grace_end(p_expires, p_grace) AT TIME ZONE 'UTC')
    WHERE NOT p_revoked AND p_active AND p_expires IS NOT NULL
$$
