import { Check, Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import type { MailKind } from '../config/app-config';

export const MAIL_STATUSES = ['pending', 'sending', 'sent', 'failed', 'suppressed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

/**
 * The mail outbox (docs/mail.md): one row per message, made by the event fan-out after commit. `dedupe_key` makes a
 * repeated fan-out harmless: `<kind>:<event id>`, or `<kind>:<licence id>:<expiry>` for reminders (once per expiry date).
 * Constraint names are the ones the migration creates (test/schema.e2e-spec.ts keeps the two equal).
 */
@Entity('mail_messages')
@Unique('mail_messages_dedupe_key_key', ['dedupeKey'])
@Index('mail_messages_created_idx', ['createdAt', 'id']) // (created_at DESC, id DESC)
@Index('mail_messages_product_created_idx', ['productId', 'createdAt', 'id']) // (product_id, created_at DESC, id DESC)
@Index('mail_messages_due_idx', ['nextAttemptAt'], { where: `status IN ('pending', 'sending')` })
@Check('mail_messages_status_check', `status IN ('pending', 'sending', 'sent', 'failed', 'suppressed')`)
@Check(
  'mail_messages_kind_check',
  `kind IN ('license_issued', 'expiring_soon', 'expired', 'seat_released', 'portal_sign_in', 'staff_invite')`,
)
export class MailMessage {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'mail_messages_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 32 })
  kind: MailKind;

  @Column({ name: 'dedupe_key', type: 'varchar', length: 200 })
  dedupeKey: string;

  /** The event it was derived from (no foreign key: events no endpoint takes are deleted after the fan-out). */
  @Column({ name: 'event_id', type: 'varchar', length: 40, nullable: true })
  eventId: string | null;

  @Column({ name: 'license_id', type: 'int', nullable: true })
  licenseId: number | null;

  @Column({ name: 'product_id', type: 'int', nullable: true })
  productId: number | null;

  @Column({ name: 'to_address', type: 'varchar', length: 254 })
  toAddress: string;

  @Column({ name: 'to_name', type: 'varchar', length: 200, nullable: true })
  toName: string | null;

  /** What the templates render: the licence as the event carried it. */
  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: MailStatus;

  @Column({ type: 'int', default: 0 })
  attempts: number;

  @TimestampColumn('next_attempt_at', { nullable: true })
  nextAttemptAt: Date | null;

  /** While `sending`: the claim's lease; after it a crashed sender's message is claimed again. */
  @TimestampColumn('locked_until', { nullable: true })
  lockedUntil: Date | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError: string | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('sent_at', { nullable: true })
  sentAt: Date | null;
}

/** Addresses that turned reminders off (docs/mail.md, Unsubscribe), stored lower-cased. */
@Entity('mail_unsubscribes')
export class MailUnsubscribe {
  @PrimaryColumn({ type: 'varchar', length: 254, primaryKeyConstraintName: 'mail_unsubscribes_pkey' })
  address: string;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}
