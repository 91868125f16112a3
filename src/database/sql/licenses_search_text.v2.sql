-- v1 with a second folding where đ is "dj", so "djordje" finds Đorđe (docs/dashboard.md, Find a licence or a customer).
CREATE OR REPLACE FUNCTION licenses_search_text() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE customer text := NEW.customer_name || ' ' || coalesce(NEW.customer_email, '');
BEGIN
  NEW.search_text := license_search_fold(customer) || ' '
    || CASE WHEN customer ~ '[đĐ]' THEN license_search_fold(replace(replace(customer, 'đ', 'dj'), 'Đ', 'Dj')) || ' ' ELSE '' END
    || lower(NEW.license_key) || ' ' || lower(replace(NEW.license_key, '-', '')) || ' ' || coalesce(NEW.customer_pib, '');
  RETURN NEW;
END $$
