-- The merged max_installations when it is a whole number in 0..2147483647, else 1; twin of seatLimit (docs/licences.md, Seat limit and dead seats).
CREATE OR REPLACE FUNCTION license_seat_limit(p_default_limits jsonb, p_limits jsonb) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN jsonb_typeof((coalesce(p_default_limits, '{}'::jsonb) || coalesce(p_limits, '{}'::jsonb)) -> 'max_installations') IS DISTINCT FROM 'number' THEN 1
    WHEN ((coalesce(p_default_limits, '{}'::jsonb) || coalesce(p_limits, '{}'::jsonb)) -> 'max_installations')::numeric BETWEEN 0 AND 2147483647 AND ((coalesce(p_default_limits, '{}'::jsonb) || coalesce(p_limits, '{}'::jsonb)) -> 'max_installations')::numeric = trunc(((coalesce(p_default_limits, '{}'::jsonb) || coalesce(p_limits, '{}'::jsonb)) -> 'max_installations')::numeric)
      THEN ((coalesce(p_default_limits, '{}'::jsonb) || coalesce(p_limits, '{}'::jsonb)) -> 'max_installations')::numeric::int
    ELSE 1 END
$$
