-- license_search_fold(text): lower-case without accents, for the staff search (docs/dashboard.md).
-- One of two definitions, chosen when it is created: unaccent() where the extension can be created (it ships with
-- the embedded PostgreSQL), otherwise a translate() of the Latin letters. Both are IMMUTABLE, so the needle and the
-- stored text are always folded the same way.
DO $$
DECLARE ext_schema text;
BEGIN
  BEGIN
    CREATE EXTENSION IF NOT EXISTS unaccent;
  EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'unaccent unavailable (%); folding Latin accents with translate()', SQLERRM;
  END;
  SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent';
  IF ext_schema IS NOT NULL THEN
    EXECUTE format(
      'CREATE OR REPLACE FUNCTION license_search_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
       AS $f$ SELECT lower(%I.unaccent(%L::regdictionary, t)) $f$',
      ext_schema, ext_schema || '.unaccent');
  ELSE
    CREATE OR REPLACE FUNCTION license_search_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $f$ SELECT replace(replace(translate(lower(t),
      'áàâäãåāăąçćĉčďđéèêëēĕėęěíìîïĩīįıñńňóòôöõøōőŕřśŝşšţťúùûüũūůűųýÿźżž',
      'aaaaaaaaaccccddeeeeeeeeeiiiiiiiinnnoooooooorrssssttuuuuuuuuuyyzzz'), 'ß', 'ss'), 'æ', 'ae') $f$;
  END IF;
END $$
