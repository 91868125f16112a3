-- A seat's contributions to the statistics (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION seat_stat_rows(p_product int, p_activated timestamptz, p_released timestamptz)
RETURNS TABLE (product_id int, metric text, day date) LANGUAGE sql IMMUTABLE AS $$
  SELECT p_product, 'seats', NULL::date WHERE p_released IS NULL
  UNION ALL SELECT p_product, 'activated', (p_activated AT TIME ZONE 'UTC')::date
$$
