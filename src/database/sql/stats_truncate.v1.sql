-- Statistics trigger: a TRUNCATE of licences or seats empties stats_deltas (docs/performance.md, Statistics at scale).
CREATE OR REPLACE FUNCTION stats_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'licenses' THEN
    DELETE FROM stats_deltas WHERE metric NOT IN ('seats', 'activated');
  ELSE
    DELETE FROM stats_deltas WHERE metric IN ('seats', 'activated');
  END IF;
  RETURN NULL;
END $$
