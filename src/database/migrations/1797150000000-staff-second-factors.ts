import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Second factors and single sign-on of staff accounts (docs/dashboard.md, Second factors; Single sign-on): TOTP secrets
 * encrypted at rest, recovery codes as SHA-256 hashes, passkeys, OpenID identities (issuer + sub), and the per-account
 * failed sign-in counters. SSO accounts have no password, so users.password_hash may be NULL. No foreign keys to users:
 * accounts are disabled, never deleted, and the staff module does not depend on the dashboard that owns users.
 */
export class StaffSecondFactors1797150000000 implements MigrationInterface {
  name = 'StaffSecondFactors1797150000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL`);
    await q.query(`CREATE TABLE staff_totp_secrets (
      user_id integer CONSTRAINT staff_totp_secrets_pkey PRIMARY KEY,
      secret_envelope varchar(200) NOT NULL,
      confirmed_at timestamptz,
      last_used_step bigint,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE TABLE staff_recovery_codes (
      id serial CONSTRAINT staff_recovery_codes_pkey PRIMARY KEY,
      user_id integer NOT NULL,
      code_hash varchar(64) NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX staff_recovery_codes_user_code_key ON staff_recovery_codes (user_id, code_hash)`);
    await q.query(`CREATE TABLE staff_passkeys (
      id serial CONSTRAINT staff_passkeys_pkey PRIMARY KEY,
      user_id integer NOT NULL,
      credential_id varchar(1400) NOT NULL,
      public_key bytea NOT NULL,
      counter bigint NOT NULL DEFAULT 0,
      transports varchar(200) NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz
    )`);
    await q.query(`CREATE UNIQUE INDEX staff_passkeys_credential_key ON staff_passkeys (credential_id)`);
    await q.query(`CREATE INDEX staff_passkeys_user_idx ON staff_passkeys (user_id)`);
    await q.query(`CREATE TABLE staff_sso_identities (
      id serial CONSTRAINT staff_sso_identities_pkey PRIMARY KEY,
      user_id integer NOT NULL,
      issuer varchar(512) NOT NULL,
      subject varchar(255) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX staff_sso_identities_issuer_subject_key ON staff_sso_identities (issuer, subject)`);
    await q.query(`CREATE UNIQUE INDEX staff_sso_identities_user_key ON staff_sso_identities (user_id)`);
    await q.query(`CREATE TABLE staff_sign_in_failures (
      account_hash varchar(64) CONSTRAINT staff_sign_in_failures_pkey PRIMARY KEY,
      window_started_at timestamptz NOT NULL DEFAULT now(),
      failures integer NOT NULL DEFAULT 0
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE staff_sign_in_failures, staff_sso_identities, staff_passkeys, staff_recovery_codes, staff_totp_secrets`);
    await q.query(`DELETE FROM users WHERE password_hash IS NULL`);
    await q.query(`ALTER TABLE users ALTER COLUMN password_hash SET NOT NULL`);
  }
}
