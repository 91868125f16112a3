import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import { ACTOR_MAX_LENGTH as AUDIT_ACTOR_MAX_LENGTH, type ActorType, type AuditAction } from '../common/event-vocabulary';

// The audit log records every event the recorder is told (docs/webhooks.md, The event spine): its actions are the event
// types. Both come from the neutral vocabulary in common/, never from the spine (docs/architecture.md, The nevers).
export { ACTOR_TYPES, type ActorType, EVENT_TYPES as AUDIT_ACTIONS, type AuditAction } from '../common/event-vocabulary';

/**
 * Append-only: a database trigger refuses UPDATE and DELETE. Constraint names are the ones the migrations create
 * (test/schema.e2e-spec.ts keeps the two equal); the indexes' DESC order lives in the migrations only.
 */
@Entity('audit_entries')
@Index('audit_entries_created_idx', ['createdAt', 'id']) // (created_at DESC, id DESC)
@Index('audit_entries_license_idx', ['licenseId', 'id'], { where: 'license_id IS NOT NULL' }) // (license_id, id DESC)
@Index('audit_entries_action_idx', ['action', 'id']) // (action, id DESC)
@Index('audit_entries_actor_type_idx', ['actorType', 'id']) // (actor_type, id DESC)
@Check('audit_entries_actor_type_check', `actor_type IN ('admin_api', 'dashboard', 'client', 'system', 'store', 'customer')`)
export class AuditEntry {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'audit_entries_pkey' })
  id: string;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @Column({ type: 'varchar', length: 64 })
  action: AuditAction;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType: ActorType;

  /** Up to "customer:" and a 254-character e-mail address (docs/stores.md). */
  @Column({ type: 'varchar', length: AUDIT_ACTOR_MAX_LENGTH, nullable: true })
  actor: string | null;

  @Column({ type: 'varchar', length: 45, nullable: true })
  ip: string | null;

  @Column({ name: 'license_id', type: 'int', nullable: true })
  licenseId: number | null;

  @Column({ name: 'product_code', type: 'varchar', length: 32, nullable: true })
  productCode: string | null;

  @Column({ type: 'jsonb', default: {} })
  details: Record<string, unknown>;
}
