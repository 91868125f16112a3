-- Statistics trigger: moves an updated licence's rows in stats_deltas (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION licenses_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, day, n)
  SELECT s.product_id, s.metric, s.day, -1 FROM license_stat_rows(OLD.product_id, OLD.license_type, OLD.revoked, OLD.active, OLD.expires_at, OLD.grace_days) s
  UNION ALL
  SELECT s.product_id, s.metric, s.day, 1 FROM license_stat_rows(NEW.product_id, NEW.license_type, NEW.revoked, NEW.active, NEW.expires_at, NEW.grace_days) s;
  IF OLD.product_id <> NEW.product_id THEN
    INSERT INTO stats_deltas (product_id, metric, day, n)
    SELECT s.product_id, s.metric, s.day, sum(s.n) FROM activations a CROSS JOIN LATERAL (
      SELECT r.product_id, r.metric, r.day, -1 AS n FROM seat_stat_rows(OLD.product_id, a.activated_at, a.released_at) r
      UNION ALL SELECT r.product_id, r.metric, r.day, 1 FROM seat_stat_rows(NEW.product_id, a.activated_at, a.released_at) r
    ) s WHERE a.license_id = NEW.id GROUP BY 1, 2, 3;
  END IF;
  RETURN NULL;
END $$
