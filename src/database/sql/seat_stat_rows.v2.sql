-- v1 by UTC hour (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION seat_stat_rows(p_product int, p_activated timestamptz, p_released timestamptz, p_reason text)
RETURNS TABLE (product_id int, metric text, hour timestamp) LANGUAGE sql IMMUTABLE AS $$
  SELECT p_product, 'seats', NULL::timestamp WHERE p_released IS NULL
  UNION ALL SELECT p_product, 'activated', NULL::timestamp
  UNION ALL SELECT p_product, 'activated_ends', date_trunc('hour', (p_activated AT TIME ZONE 'UTC') + interval '720 hours')
  UNION ALL SELECT p_product, 'heartbeat_released', NULL::timestamp WHERE p_reason = 'heartbeat_timeout'
  UNION ALL SELECT p_product, 'heartbeat_released_ends', date_trunc('hour', (p_released AT TIME ZONE 'UTC') + interval '720 hours')
    WHERE p_reason = 'heartbeat_timeout'
$$
