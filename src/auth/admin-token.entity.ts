import { Check, Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import type { AdminScope } from '../common/auth/scopes';

/** A scoped admin token (docs/admin-api.md, Credentials). Only the SHA-256 hex of the token is stored. */
@Entity('admin_tokens')
@Unique('admin_tokens_token_hash_key', ['tokenHash'])
@Unique('admin_tokens_name_key', ['name'])
@Check('admin_tokens_scopes_not_empty', 'cardinality(scopes) > 0')
export class AdminToken {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'admin_tokens_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash: string;

  @Column({ type: 'text', array: true })
  scopes: AdminScope[];

  /** Product ids, not codes: a code can be renamed and reused (docs/security.md, Review findings (round 3)); null: every product. */
  @Column({ name: 'product_ids', type: 'int', array: true, nullable: true })
  productIds: number[] | null;

  @TimestampColumn('expires_at', { nullable: true })
  expiresAt: Date | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('last_used_at', { nullable: true })
  lastUsedAt: Date | null;

  @TimestampColumn('revoked_at', { nullable: true })
  revokedAt: Date | null;
}
