-- The merged heartbeat_timeout_seconds of product and licence policy; twin of heartbeatTimeout (docs/licences.md, Seat limit and dead seats).
CREATE OR REPLACE FUNCTION license_heartbeat_timeout(p_default_policy jsonb, p_policy jsonb) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ((coalesce(p_default_policy, '{}'::jsonb) || coalesce(p_policy, '{}'::jsonb)) ->> 'heartbeat_timeout_seconds')::int
$$
