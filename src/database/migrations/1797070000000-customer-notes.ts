import { MigrationInterface, QueryRunner } from 'typeorm';

/** Staff notes about a customer (docs/dashboard.md, A customer's page): one row per note, newest read first. */
export class CustomerNotes1797070000000 implements MigrationInterface {
  name = 'CustomerNotes1797070000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE customer_notes (
      id bigserial CONSTRAINT customer_notes_pkey PRIMARY KEY,
      customer varchar(300) NOT NULL,
      body varchar(2000) NOT NULL,
      author varchar(64) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX customer_notes_customer_idx ON customer_notes (customer, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE customer_notes`);
  }
}
