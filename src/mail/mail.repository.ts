import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { plain, rowShape, type RowOf } from '../database/row-shape';
import { param, raw, runStatement, sql } from '../database/statement';
import type { MailKind } from '../config/app-config';
import type { NewMail } from './mail-derivation';
import type { MailStatus } from './mail.entities';

/** A message claimed for one attempt; `unsubscribed`: a reminder to an address that turned reminders off. */
export interface ClaimedMail {
  id: string;
  kind: MailKind;
  toAddress: string;
  toName: string | null;
  data: Record<string, unknown>;
  attempts: number;
  unsubscribed: boolean;
}

/** A message as staff see it. */
export interface MailRow {
  id: string;
  kind: MailKind;
  toAddress: string;
  status: MailStatus;
  attempts: number;
  lastError: string | null;
  licenseId: number | null;
  productId: number | null;
  /** The product's code as the message's licence carried it. */
  productCode: string | null;
  eventId: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  sentAt: Date | null;
}

/** A mail_messages row as staff see it; its bigint id as text. */
const MAIL_ROWS = rowShape(
  plain<MailRow>(),
  'id, kind, to_address, status, attempts, last_error, license_id, product_id, product_code, event_id, next_attempt_at, created_at, sent_at',
  { convert: { id: (id: string) => String(id) }, expressions: { product_code: "data->'product'->>'code'" } },
);

type Row = RowOf<typeof MAIL_ROWS>;

/** A message claimed for an attempt, read from the claiming UPDATE's RETURNING. */
const CLAIMED_ROWS = rowShape(plain<ClaimedMail>(), 'id, kind, to_address, to_name, data, attempts, unsubscribed', {
  convert: { id: (id: string) => String(id) },
  expressions: {
    unsubscribed: `(m.kind IN ('expiring_soon', 'expired') AND EXISTS (SELECT 1 FROM mail_unsubscribes u WHERE u.address = lower(m.to_address)))`,
  },
});

/** The mail outbox and the opt-outs (docs/mail.md). Style: named SQL with typed rows (docs/architecture.md, Database style). */
@Injectable()
export class MailRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One statement for a batch; the unique dedupe_key makes a repeated fan-out harmless. Returns how many new ones wait to be sent. */
  async insertMany(mails: NewMail[], manager: EntityManager = this.dataSource.manager): Promise<number> {
    if (mails.length === 0) return 0;
    const column = <T>(pick: (m: NewMail) => T) => mails.map(pick);
    const rows = await runStatement<{ created: number }>(
      manager,
      'mail-insert',
      sql`WITH created AS (
         INSERT INTO mail_messages (kind, dedupe_key, event_id, license_id, product_id, to_address, to_name, data, status, last_error, next_attempt_at)
         SELECT m.kind, m.dedupe_key, m.event_id, m.license_id, m.product_id, m.to_address, m.to_name, m.data, m.status, m.last_error,
                CASE WHEN m.status = 'pending' THEN now() END
         FROM unnest(${column((m) => m.kind)}::varchar[], ${column((m) => m.dedupeKey)}::varchar[], ${column((m) => m.eventId)}::varchar[],
           ${column((m) => m.licenseId)}::int[], ${column((m) => m.productId)}::int[], ${column((m) => m.toAddress)}::varchar[],
           ${column((m) => m.toName)}::varchar[], ${column((m) => JSON.stringify(m.data))}::jsonb[], ${column((m) => m.status)}::varchar[],
           ${column((m) => m.lastError)}::varchar[])
           AS m(kind, dedupe_key, event_id, license_id, product_id, to_address, to_name, data, status, last_error)
         ON CONFLICT ON CONSTRAINT mail_messages_dedupe_key_key DO NOTHING RETURNING status
       )
       SELECT count(*) FILTER (WHERE status = 'pending')::int AS created FROM created`,
    );
    return rows[0]?.created ?? 0;
  }

  /**
   * Up to `limit` due messages (pending and due, or `sending` whose lease ran out: a crashed sender's), taken for one
   * attempt each in one statement; rows another sender holds are skipped (SKIP LOCKED), so no message is sent twice at once.
   */
  async claimDue(limit: number, leaseSeconds: number): Promise<ClaimedMail[]> {
    const rows = await runStatement<RowOf<typeof CLAIMED_ROWS>>(
      this.dataSource.manager,
      'mail-claim-due',
      sql`UPDATE mail_messages m SET status = 'sending', attempts = m.attempts + 1, locked_until = now() + make_interval(secs => ${leaseSeconds}::int)
       WHERE m.id IN (
         SELECT id FROM mail_messages
         WHERE status IN ('pending', 'sending') AND next_attempt_at <= now() AND (status = 'pending' OR locked_until < now())
         ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
       RETURNING ${raw(CLAIMED_ROWS.columnsOf('m'))}`,
    );
    return rows.map(CLAIMED_ROWS.fromRow);
  }

  /** Settles an attempt: sent, failed, suppressed, or pending again after `retryInSeconds`. */
  async settle(id: string, outcome: { status: 'sent' | 'failed' | 'suppressed' | 'pending'; error?: string; retryInSeconds?: number }) {
    const statusParam = param(outcome.status);
    await runStatement(
      this.dataSource.manager,
      'mail-settle',
      sql`UPDATE mail_messages SET status = ${statusParam}::varchar, last_error = coalesce(${outcome.error?.slice(0, 500) ?? null}::varchar, last_error), locked_until = NULL,
         sent_at = CASE WHEN ${statusParam}::varchar = 'sent' THEN now() END,
         next_attempt_at = CASE WHEN ${statusParam}::varchar = 'pending' THEN now() + make_interval(secs => ${outcome.retryInSeconds ?? 0}::int) END
       WHERE id = ${id} AND status = 'sending'`,
    );
  }

  /** Newest first; `products` (null: every product) limits the list to those products' messages. */
  async list(products: readonly number[] | null, limit: number, offset: number): Promise<{ rows: MailRow[]; total: number }> {
    const productsParam = param(products);
    const rows = await runStatement<Row & { total: number }>(
      this.dataSource.manager,
      'mail-list',
      sql`SELECT ${raw(MAIL_ROWS.columns)}, count(*) OVER ()::int AS total FROM mail_messages
       WHERE ${productsParam}::int[] IS NULL OR product_id = ANY(${productsParam}::int[])
       ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    );
    if (rows.length === 0 && offset > 0) {
      const productsParam = param(products);
      const counted = await runStatement<{ total: number }>(
        this.dataSource.manager,
        'mail-count',
        sql`SELECT count(*)::int AS total FROM mail_messages WHERE ${productsParam}::int[] IS NULL OR product_id = ANY(${productsParam}::int[])`,
      );
      return { rows: [], total: counted[0]?.total ?? 0 };
    }
    return { rows: rows.map(MAIL_ROWS.fromRow), total: rows[0]?.total ?? 0 };
  }

  async get(id: string, manager: EntityManager = this.dataSource.manager): Promise<MailRow | null> {
    const rows = await runStatement<Row>(manager, 'mail-get', sql`SELECT ${raw(MAIL_ROWS.columns)} FROM mail_messages WHERE id = ${id}`);
    return rows[0] ? MAIL_ROWS.fromRow(rows[0]) : null;
  }

  /** A failed message pending again with a fresh retry schedule; false when it was not failed. */
  async reopenFailed(id: string, manager: EntityManager): Promise<boolean> {
    const rows = await runStatement<{ id: string }>(
      manager,
      'mail-reopen',
      sql`UPDATE mail_messages SET status = 'pending', attempts = 0, next_attempt_at = now() WHERE id = ${id} AND status = 'failed' RETURNING id`,
    );
    return rows.length === 1;
  }

  async unsubscribe(address: string): Promise<void> {
    await runStatement(
      this.dataSource.manager,
      'mail-unsubscribe',
      sql`INSERT INTO mail_unsubscribes (address) VALUES (lower(${address})) ON CONFLICT ON CONSTRAINT mail_unsubscribes_pkey DO NOTHING`,
    );
  }
}
