-- v1 by UTC hour (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION licenses_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, hour, n)
  SELECT s.product_id, s.metric, s.hour, -count(*) FROM old_rows l
  CROSS JOIN LATERAL license_stat_rows(l.product_id, l.license_type, l.revoked, l.active, l.expires_at, l.grace_days) s
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$
