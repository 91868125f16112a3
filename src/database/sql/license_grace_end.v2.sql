-- v1 as an inlinable SQL function on the UTC clock: IMMUTABLE, the same results.
CREATE OR REPLACE FUNCTION license_grace_end(p_expires timestamptz, p_grace int) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ((p_expires AT TIME ZONE 'UTC') + make_interval(hours => 24 * p_grace)) AT TIME ZONE 'UTC'
$$
