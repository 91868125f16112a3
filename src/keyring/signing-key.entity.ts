import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../common/timestamp-column';
import type { SigningAlgorithm } from '../signing/envelope';

export const SIGNING_KEY_STATUSES = ['active', 'retired', 'revoked'] as const;
export type SigningKeyStatus = (typeof SIGNING_KEY_STATUSES)[number];
export const SIGNING_KEY_ORIGINS = ['imported', 'generated'] as const;
export type SigningKeyOrigin = (typeof SIGNING_KEY_ORIGINS)[number];

/** One endorsement of a key (docs/signing.md, Endorsed rotation): the endorsing key's id and its signature, unpadded base64url. */
export interface KeyEndorsement {
  key_id: string;
  signature: string;
}

/**
 * One key of the keyring (docs/signing.md, The keyring). Only the active key keeps its private half (encrypted): a retired key only
 * verifies what it signed, so its private key is erased when it retires.
 */
@Entity('signing_keys')
@Index('signing_keys_one_active_idx', ['status'], { unique: true, where: `status = 'active'` })
@Check('signing_keys_key_id_check', `key_id ~ '^[0-9a-f]{16}$'`)
@Check('signing_keys_status_check', `status IN ('active', 'retired', 'revoked')`)
@Check('signing_keys_origin_check', `origin IN ('imported', 'generated')`)
@Check('signing_keys_algorithm_check', `algorithm IN ('RSA-SHA256', 'Ed25519')`)
@Check('signing_keys_endorsements_check', `jsonb_typeof(endorsements) = 'array'`)
@Check(
  'signing_keys_lifecycle_check',
  `(status = 'active' AND private_key_encrypted IS NOT NULL AND retired_at IS NULL AND revoked_at IS NULL)` +
    ` OR (status = 'retired' AND private_key_encrypted IS NULL AND retired_at IS NOT NULL AND revoked_at IS NULL)` +
    ` OR (status = 'revoked' AND private_key_encrypted IS NULL AND retired_at IS NOT NULL AND revoked_at IS NOT NULL)`,
)
export class StoredSigningKey {
  @PrimaryColumn({ name: 'key_id', type: 'varchar', length: 16, primaryKeyConstraintName: 'signing_keys_pkey' })
  keyId: string;

  @Column({ type: 'varchar', length: 16 })
  status: SigningKeyStatus;

  @Column({ name: 'public_key_pem', type: 'text' })
  publicKeyPem: string;

  /** KeyEncryption's envelope of the PKCS#8 private key; null once the key is retired. */
  @Column({ name: 'private_key_encrypted', type: 'text', nullable: true })
  privateKeyEncrypted: string | null;

  @Column({ type: 'varchar', length: 16 })
  origin: SigningKeyOrigin;

  @Column({ type: 'varchar', length: 16, default: 'RSA-SHA256' })
  algorithm: SigningAlgorithm;

  /** Endorsements of this key by other keys: the outgoing key at rotation, an offline root key added by an admin. */
  @Column({ type: 'jsonb', default: [] })
  endorsements: KeyEndorsement[];

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('retired_at', { nullable: true })
  retiredAt: Date | null;

  @TimestampColumn('revoked_at', { nullable: true })
  revokedAt: Date | null;
}
