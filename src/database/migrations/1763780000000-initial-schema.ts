import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqlFunction } from '../sql-functions';

export class InitialSchema1763780000000 implements MigrationInterface {
  name = 'InitialSchema1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE products (
        id serial PRIMARY KEY,
        code varchar(32) NOT NULL CHECK (code ~ '^[A-Z][A-Z0-9_]{1,31}$'),
        name varchar(200) NOT NULL,
        key_prefix varchar(8) NOT NULL CHECK (key_prefix ~ '^[A-Z0-9]{2,8}$'),
        default_limits jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(default_limits) = 'object'),
        available_features jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(available_features) = 'array'),
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX products_code_key ON products (code)`);
    await q.query(`CREATE UNIQUE INDEX products_key_prefix_key ON products (key_prefix)`);

    await q.query(`
      CREATE TABLE licenses (
        id serial PRIMARY KEY,
        product_id int NOT NULL REFERENCES products (id) ON DELETE RESTRICT,
        license_key varchar(64) NOT NULL,
        license_type varchar(16) NOT NULL CHECK (license_type IN ('TRIAL', 'MONTHLY', 'QUARTERLY', 'YEARLY', 'PERPETUAL')),
        customer_name varchar(200) NOT NULL,
        customer_email varchar(254),
        customer_pib varchar(9),
        limits jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(limits) = 'object'),
        features jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(features) = 'array'),
        grace_days int NOT NULL DEFAULT 7 CHECK (grace_days BETWEEN 0 AND 365),
        notes text,
        expires_at timestamptz,
        active boolean NOT NULL DEFAULT true,
        revoked boolean NOT NULL DEFAULT false,
        revoked_at timestamptz,
        revoke_reason varchar(500),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        search_text text GENERATED ALWAYS AS (lower(customer_name || ' ' || coalesce(customer_email, '') || ' ' || license_key)) STORED
      )`);
    await q.query(`CREATE UNIQUE INDEX licenses_license_key_key ON licenses (license_key)`);
    await q.query(`CREATE INDEX licenses_created_idx ON licenses (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX licenses_product_created_idx ON licenses (product_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX licenses_type_created_idx ON licenses (license_type, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX licenses_expires_idx ON licenses (expires_at)`);
    // Trigram index for the `q` substring search, where the extension may be created (not on every managed service).
    await q.query(`
      DO $$ BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX licenses_search_trgm_idx ON licenses USING gin (search_text gin_trgm_ops);
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm unavailable (%); licence search will scan', SQLERRM;
      END $$`);

    await q.query(`
      CREATE TABLE activations (
        id bigserial PRIMARY KEY,
        license_id int NOT NULL REFERENCES licenses (id) ON DELETE CASCADE,
        machine_fingerprint varchar(71) NOT NULL,
        hostname varchar(255),
        os varchar(100),
        app_version varchar(50),
        ip varchar(45),
        activated_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        released_at timestamptz,
        release_reason varchar(20) CHECK (release_reason IN ('deactivated', 'force_released')),
        CHECK ((released_at IS NULL) = (release_reason IS NULL))
      )`);
    // At most one current seat per machine and licence, whatever the races.
    await q.query(
      `CREATE UNIQUE INDEX activations_current_seat_key ON activations (license_id, machine_fingerprint) WHERE released_at IS NULL`,
    );
    await q.query(`CREATE INDEX activations_license_idx ON activations (license_id, activated_at DESC, id DESC)`);
    await q.query(`CREATE INDEX activations_activated_idx ON activations (activated_at)`);

    await q.query(`
      CREATE TABLE audit_entries (
        id bigserial PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now(),
        action varchar(64) NOT NULL,
        actor_type varchar(16) NOT NULL CHECK (actor_type IN ('admin_api', 'dashboard', 'client', 'system')),
        actor varchar(200),
        ip varchar(45),
        license_id int,
        product_code varchar(32),
        details jsonb NOT NULL DEFAULT '{}'
      )`);
    await q.query(`CREATE INDEX audit_entries_created_idx ON audit_entries (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_entries_license_idx ON audit_entries (license_id, id DESC) WHERE license_id IS NOT NULL`);
    await q.query(`CREATE INDEX audit_entries_action_idx ON audit_entries (action, id DESC)`);
    await q.query(`CREATE INDEX audit_entries_actor_type_idx ON audit_entries (actor_type, id DESC)`);
    await q.query(sqlFunction('audit_entries_append_only.v1'));
    await q.query(`
      CREATE TRIGGER audit_entries_no_change BEFORE UPDATE OR DELETE ON audit_entries
      FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only()`);

    await q.query(`
      CREATE TABLE users (
        id serial PRIMARY KEY,
        username varchar(64) NOT NULL,
        password_hash varchar(255) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_login_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX users_username_key ON users (lower(username))`);

    // connect-pg-simple's table, created here so the schema comes from migrations only.
    await q.query(`
      CREATE TABLE session (
        sid varchar NOT NULL PRIMARY KEY,
        sess json NOT NULL,
        expire timestamp(6) NOT NULL
      )`);
    await q.query(`CREATE INDEX session_expire_idx ON session (expire)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS session, users, audit_entries, activations, licenses, products`);
    await q.query(`DROP FUNCTION IF EXISTS audit_entries_append_only()`);
  }
}
