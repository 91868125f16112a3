-- Statistics trigger: subtracts deleted seats' rows from stats_deltas (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION seats_stats_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, day, n)
  SELECT s.product_id, s.metric, s.day, -count(*) FROM old_rows a JOIN licenses l ON l.id = a.license_id
  CROSS JOIN LATERAL seat_stat_rows(l.product_id, a.activated_at, a.released_at) s
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$
