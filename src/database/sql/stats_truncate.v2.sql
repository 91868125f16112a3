-- v1 by UTC hour (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION stats_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'licenses' THEN
    DELETE FROM stats_deltas WHERE metric IN ('usable', 'revoked', 'suspended', 'expires', 'grace_ends') OR metric LIKE 'type:%';
  ELSE
    DELETE FROM stats_deltas WHERE metric IN ('seats', 'activated', 'activated_ends', 'heartbeat_released', 'heartbeat_released_ends');
  END IF;
  RETURN NULL;
END $$
