-- v1 by UTC hour (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION seats_stats_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_deltas (product_id, metric, hour, n)
  SELECT s.product_id, s.metric, s.hour, count(*) FROM new_rows a CROSS JOIN LATERAL seat_stat_rows(a.product_id, a.activated_at, a.released_at, a.release_reason) s
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$
