-- A licence's contributions to the statistics (docs/performance.md, Statistics at scale): one row per metric it counts in.
CREATE OR REPLACE FUNCTION license_stat_rows(p_product int, p_type text, p_revoked boolean, p_active boolean, p_expires timestamptz, p_grace int)
RETURNS TABLE (product_id int, metric text, day date) LANGUAGE sql IMMUTABLE AS $$
  SELECT p_product, 'type:' || p_type, NULL::date
  UNION ALL SELECT p_product, CASE WHEN p_revoked THEN 'revoked' WHEN NOT p_active THEN 'suspended' ELSE 'usable' END, NULL::date
  UNION ALL SELECT p_product, 'expires', (p_expires AT TIME ZONE 'UTC')::date
    WHERE NOT p_revoked AND p_active AND p_expires IS NOT NULL
  UNION ALL SELECT p_product, 'grace_ends', (license_grace_end(p_expires, p_grace) AT TIME ZONE 'UTC')::date
    WHERE NOT p_revoked AND p_active AND p_expires IS NOT NULL
$$
