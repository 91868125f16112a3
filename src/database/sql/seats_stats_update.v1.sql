-- Statistics trigger: moves an updated seat's rows in stats_deltas (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION seats_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, day, n)
  SELECT s.product_id, s.metric, s.day, -1 FROM licenses l CROSS JOIN LATERAL seat_stat_rows(l.product_id, OLD.activated_at, OLD.released_at) s WHERE l.id = OLD.license_id
  UNION ALL
  SELECT s.product_id, s.metric, s.day, 1 FROM licenses l CROSS JOIN LATERAL seat_stat_rows(l.product_id, NEW.activated_at, NEW.released_at) s WHERE l.id = NEW.license_id;
  RETURN NULL;
END $$
