-- Keeps licenses.search_text, the staff search's folded text, up to date (docs/dashboard.md).
CREATE OR REPLACE FUNCTION licenses_search_text() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_text := license_search_fold(NEW.customer_name || ' ' || coalesce(NEW.customer_email, '')) || ' '
    || lower(NEW.license_key) || ' ' || lower(replace(NEW.license_key, '-', '')) || ' ' || coalesce(NEW.customer_pib, '');
  RETURN NEW;
END $$
