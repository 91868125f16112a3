import { Check, Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import type { StaffRole } from './roles';

/** An invitation to join the staff (docs/dashboard.md, Staff and roles): single use, valid 72 h, only the token's SHA-256 kept. */
@Entity('staff_invites')
@Unique('staff_invites_token_hash_key', ['tokenHash'])
@Check('staff_invites_role_check', `role IN ('owner', 'admin', 'support', 'viewer')`)
export class StaffInvite {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'staff_invites_pkey' })
  id: number;

  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  @Column({ type: 'varchar', length: 64 })
  username: string;

  @Column({ type: 'varchar', length: 320 })
  email: string;

  @Column({ type: 'varchar', length: 16 })
  role: StaffRole;

  /** Product ids; null: every product. */
  @Column({ name: 'product_ids', type: 'int', array: true, nullable: true })
  productIds: number[] | null;

  /** The owner who sent it. */
  @Column({ name: 'invited_by', type: 'varchar', length: 64 })
  invitedBy: string;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('expires_at')
  expiresAt: Date;

  @TimestampColumn('accepted_at', { nullable: true })
  acceptedAt: Date | null;
}
