import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { ActorType } from '../common/auth/actor';

// Actors are defined in common/ (every feature records one); re-exported here beside the audit actions.
export { ACTOR_TYPES, type ActorType } from '../common/auth/actor';

/** The audit entry's actor column: longer names are cut to it when recorded. */
export const AUDIT_ACTOR_MAX_LENGTH = 320;

export const AUDIT_ACTIONS = [
  'product.created',
  'product.updated',
  'license.created',
  'license.updated',
  'license.revoked',
  'license.released',
  'license.activated',
  'license.activation_denied',
  'license.deactivated',
  'license.file_issued',
  'license.usage_limit_reached',
  'license.usage_reset',
  'license.trial_started',
  'license.key_resent',
  'mail.retried',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.delivery_retried',
  'auth.login',
  'auth.login_failed',
  'auth.logout',
  'signing_key.rotated',
  'signing_key.revoked',
  'signing_key.endorsed',
  'token.created',
  'token.revoked',
  'store_plan.created',
  'store_plan.updated',
  'store_plan.deleted',
  'customer.note_added',
  'release.created',
  'release.artifact_uploaded',
  'release.published',
  'release.yanked',
  'release.deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

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

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
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
