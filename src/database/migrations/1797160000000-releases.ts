import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Releases and their artifacts per product, download counts per release and day, and the products' update policy
 * (docs/releases.md).
 */
export class Releases1797160000000 implements MigrationInterface {
  name = 'Releases1797160000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE products ADD COLUMN update_policy varchar(20) NOT NULL DEFAULT 'current'
      CONSTRAINT products_update_policy_check CHECK (update_policy IN ('current', 'perpetual_fallback'))`);
    await q.query(`CREATE TABLE releases (
      id serial CONSTRAINT releases_pkey PRIMARY KEY,
      product_id int NOT NULL CONSTRAINT releases_product_fkey REFERENCES products (id),
      version varchar(256) NOT NULL,
      channel varchar(8) NOT NULL DEFAULT 'stable' CONSTRAINT releases_channel_check CHECK (channel IN ('stable', 'beta', 'alpha')),
      notes text NOT NULL DEFAULT '',
      required_features jsonb NOT NULL DEFAULT '[]' CONSTRAINT releases_required_features_check CHECK (jsonb_typeof(required_features) = 'array'),
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz,
      yanked_at timestamptz
    )`);
    await q.query(`CREATE UNIQUE INDEX releases_product_version_key ON releases (product_id, version)`);
    await q.query(`CREATE TABLE release_artifacts (
      id serial CONSTRAINT release_artifacts_pkey PRIMARY KEY,
      release_id int NOT NULL CONSTRAINT release_artifacts_release_fkey REFERENCES releases (id) ON DELETE CASCADE,
      filename varchar(200) NOT NULL,
      platform varchar(16) NOT NULL,
      arch varchar(16) NOT NULL,
      size bigint NOT NULL,
      sha256 varchar(64) NOT NULL,
      sha512 varchar(128) NOT NULL,
      signature text,
      storage_key varchar(300) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX release_artifacts_release_filename_key ON release_artifacts (release_id, filename)`);
    await q.query(`CREATE TABLE release_downloads (
      release_id int NOT NULL CONSTRAINT release_downloads_release_fkey REFERENCES releases (id) ON DELETE CASCADE,
      day date NOT NULL,
      count int NOT NULL DEFAULT 0,
      CONSTRAINT release_downloads_pkey PRIMARY KEY (release_id, day)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE release_downloads`);
    await q.query(`DROP TABLE release_artifacts`);
    await q.query(`DROP TABLE releases`);
    await q.query(`ALTER TABLE products DROP COLUMN update_policy`);
  }
}
