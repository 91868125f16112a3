import { MigrationInterface, QueryRunner } from 'typeorm';

/** The staff's saved views of the licence list (docs/dashboard.md, Saved views): a name and the list's query string. */
export class SavedViews1797090000000 implements MigrationInterface {
  name = 'SavedViews1797090000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE saved_views (
      id serial CONSTRAINT saved_views_pkey PRIMARY KEY,
      name varchar(80) NOT NULL,
      query varchar(2000) NOT NULL,
      author varchar(64) NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE UNIQUE INDEX saved_views_name_key ON saved_views (name)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE saved_views`);
  }
}
