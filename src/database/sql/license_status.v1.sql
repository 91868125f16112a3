-- The one SQL definition of a licence's derived status; its TypeScript twin is licenseStatus (docs/licences.md, Status and grace).
CREATE OR REPLACE FUNCTION license_status(p_revoked boolean, p_active boolean, p_expires timestamptz, p_grace int, p_at timestamptz)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_revoked THEN 'revoked'
    WHEN NOT p_active THEN 'suspended'
    WHEN p_at > license_grace_end(p_expires, p_grace) THEN 'expired'
    WHEN p_at > p_expires THEN 'grace'
    ELSE 'active' END
$$
