import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What TypeORM needs to see that the entities and this schema agree (test/schema.e2e-spec.ts):
 * - `typeorm_metadata`, the table where TypeORM keeps the expression of a generated column (PostgreSQL's own
 *   catalog prints it differently), with the row for licenses.search_text. Its `database` column is the database's
 *   name at the time of writing; runMigrations corrects it for a copy restored under another name.
 * - a primary key on stats_deltas, the last table without an entity: TypeORM describes only tables with one.
 */
export class EntitiesDescribeSchema1795500000000 implements MigrationInterface {
  name = 'EntitiesDescribeSchema1795500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS typeorm_metadata (
        "type" varchar NOT NULL,
        "database" varchar,
        "schema" varchar,
        "table" varchar,
        "name" varchar,
        "value" text
      )`);
    await q.query(
      `INSERT INTO typeorm_metadata ("type", "database", "schema", "table", "name", "value")
       VALUES ('GENERATED_COLUMN', current_database(), current_schema(), 'licenses', 'search_text', $1)`,
      [`lower(customer_name || ' ' || coalesce(customer_email, '') || ' ' || license_key)`],
    );
    await q.query(`ALTER TABLE stats_deltas ADD COLUMN id bigserial PRIMARY KEY`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE stats_deltas DROP COLUMN id`);
    await q.query(`DELETE FROM typeorm_metadata WHERE "type" = 'GENERATED_COLUMN' AND "table" = 'licenses' AND "name" = 'search_text'`);
    await q.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM typeorm_metadata) THEN DROP TABLE typeorm_metadata; END IF; END $$`);
  }
}
