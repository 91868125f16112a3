-- v1 by UTC hour (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION licenses_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, hour, n)
  SELECT s.product_id, s.metric, s.hour, -1 FROM license_stat_rows(OLD.product_id, OLD.license_type, OLD.revoked, OLD.active, OLD.expires_at, OLD.grace_days) s
  UNION ALL
  SELECT s.product_id, s.metric, s.hour, 1 FROM license_stat_rows(NEW.product_id, NEW.license_type, NEW.revoked, NEW.active, NEW.expires_at, NEW.grace_days) s;
  RETURN NULL;
END $$
