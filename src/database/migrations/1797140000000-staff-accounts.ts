import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Staff accounts (docs/dashboard.md, Staff and roles): each user gets a role, optional products, an e-mail address and a
 * disabled flag; existing users become owners. `session_generation` grows on every change that must end the account's
 * sessions. Invitations are single-use links valid 72 h, stored as the SHA-256 of the token only.
 */
export class StaffAccounts1797140000000 implements MigrationInterface {
  name = 'StaffAccounts1797140000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users
      ADD COLUMN role varchar(16) NOT NULL DEFAULT 'owner',
      ADD COLUMN product_ids int[],
      ADD COLUMN email varchar(320),
      ADD COLUMN disabled boolean NOT NULL DEFAULT false,
      ADD COLUMN session_generation integer NOT NULL DEFAULT 0,
      ADD CONSTRAINT users_role_check CHECK (role IN ('owner', 'admin', 'support', 'viewer'))`);
    // New accounts name their role; the default only turned the existing users into owners.
    await q.query(`ALTER TABLE users ALTER COLUMN role DROP DEFAULT`);
    await q.query(`ALTER TABLE users RENAME COLUMN last_login_at TO last_sign_in_at`);
    await q.query(`CREATE TABLE staff_invites (
      id serial CONSTRAINT staff_invites_pkey PRIMARY KEY,
      token_hash char(64) NOT NULL CONSTRAINT staff_invites_token_hash_key UNIQUE,
      username varchar(64) NOT NULL,
      email varchar(320) NOT NULL,
      role varchar(16) NOT NULL CONSTRAINT staff_invites_role_check CHECK (role IN ('owner', 'admin', 'support', 'viewer')),
      product_ids int[],
      invited_by varchar(64) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE staff_invites`);
    await q.query(`ALTER TABLE users RENAME COLUMN last_sign_in_at TO last_login_at`);
    await q.query(`ALTER TABLE users DROP CONSTRAINT users_role_check,
      DROP COLUMN role, DROP COLUMN product_ids, DROP COLUMN email, DROP COLUMN disabled, DROP COLUMN session_generation`);
  }
}
