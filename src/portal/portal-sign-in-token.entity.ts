import { Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';

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

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('expires_at')
  expiresAt: Date;

  @TimestampColumn('used_at', { nullable: true })
  usedAt: Date | null;
}
