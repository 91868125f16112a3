-- Whether a seat missed its heartbeat deadline at p_at; twin of seatIsDead (docs/licences.md, Seat limit and dead seats).
CREATE OR REPLACE FUNCTION seat_is_dead(p_last_seen timestamptz, p_timeout int, p_at timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT p_timeout IS NOT NULL AND (p_last_seen AT TIME ZONE 'UTC') < (p_at AT TIME ZONE 'UTC') - make_interval(secs => p_timeout)
$$
