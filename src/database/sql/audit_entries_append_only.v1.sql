-- Refuses UPDATE and DELETE on audit_entries: the audit log is append-only (docs/security.md).
CREATE OR REPLACE FUNCTION audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_entries is append-only';
END $$
