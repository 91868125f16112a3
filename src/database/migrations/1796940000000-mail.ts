import { MigrationInterface, QueryRunner } from 'typeorm';

/** The mail outbox and the reminder opt-outs (docs/mail.md). */
export class Mail1796940000000 implements MigrationInterface {
  name = 'Mail1796940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mail_messages (
        id bigserial CONSTRAINT mail_messages_pkey PRIMARY KEY,
        kind varchar(32) NOT NULL,
        dedupe_key varchar(200) NOT NULL CONSTRAINT mail_messages_dedupe_key_key UNIQUE,
        event_id varchar(40),
        license_id int,
        product_id int,
        to_address varchar(254) NOT NULL,
        to_name varchar(200),
        data jsonb NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending',
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        locked_until timestamptz,
        last_error varchar(500),
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        CONSTRAINT mail_messages_status_check CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'suppressed')),
        CONSTRAINT mail_messages_kind_check CHECK (kind IN ('license_issued', 'expiring_soon', 'expired', 'seat_released', 'portal_sign_in'))
      )`);
    await q.query(`CREATE INDEX mail_messages_created_idx ON mail_messages (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX mail_messages_product_created_idx ON mail_messages (product_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX mail_messages_due_idx ON mail_messages (next_attempt_at) WHERE status IN ('pending', 'sending')`);
    await q.query(`
      CREATE TABLE mail_unsubscribes (
        address varchar(254) CONSTRAINT mail_unsubscribes_pkey PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE mail_unsubscribes`);
    await q.query(`DROP TABLE mail_messages`);
  }
}
