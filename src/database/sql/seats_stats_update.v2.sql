-- v1 by UTC hour (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION seats_stats_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, hour, n)
  SELECT s.product_id, s.metric, s.hour, -1 FROM seat_stat_rows(OLD.product_id, OLD.activated_at, OLD.released_at, OLD.release_reason) s
  UNION ALL
  SELECT s.product_id, s.metric, s.hour, 1 FROM seat_stat_rows(NEW.product_id, NEW.activated_at, NEW.released_at, NEW.release_reason) s;
  RETURN NULL;
END $$
