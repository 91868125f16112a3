-- Statistics trigger: subtracts the seats of deleted licences (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION licenses_stats_delete_seats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, day, n)
  SELECT s.product_id, s.metric, s.day, -count(*) FROM activations a
  CROSS JOIN LATERAL seat_stat_rows(OLD.product_id, a.activated_at, a.released_at) s
  WHERE a.license_id = OLD.id GROUP BY 1, 2, 3;
  RETURN OLD;
END $$
