import { Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** A sign-in link of the portal (docs/portal.md, Signing in): only the SHA-256 of its token is kept. */
@Entity('portal_sign_in_tokens')
@Index('portal_sign_in_tokens_expires_idx', ['expiresAt'])
@Unique('portal_sign_in_tokens_token_hash_key', ['tokenHash'])
export class PortalSignInToken {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'portal_sign_in_tokens_pkey' })
  id: string;

  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  /** Lower-cased. */
  @Column({ type: 'varchar', length: 254 })
  email: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;
}
