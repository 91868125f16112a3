import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const ACTOR_TYPES = ['admin_api', 'dashboard', 'client', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

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
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.delivery_retried',
  'auth.login',
  'auth.login_failed',
  'auth.logout',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Append-only: a database trigger refuses UPDATE and DELETE. */
@Entity('audit_entries')
export class AuditEntry {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ type: 'varchar', length: 64 })
  action: AuditAction;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType: ActorType;

  @Column({ type: 'varchar', length: 200, nullable: true })
  actor: string | null;

  @Column({ type: 'varchar', length: 45, nullable: true })
  ip: string | null;

  @Column({ name: 'license_id', type: 'int', nullable: true })
  licenseId: number | null;

  @Column({ name: 'product_code', type: 'varchar', length: 32, nullable: true })
  productCode: string | null;

  @Column({ type: 'jsonb', default: {} })
  details: Record<string, any>;
}
