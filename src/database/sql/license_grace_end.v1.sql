-- The end of a licence's grace period (docs/licences.md, Status and grace).
CREATE OR REPLACE FUNCTION license_grace_end(p_expires timestamptz, p_grace int) RETURNS timestamptz
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN p_expires + make_interval(hours => 24 * p_grace);
END $$
