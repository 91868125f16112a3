import { Check, Column, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';
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

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
