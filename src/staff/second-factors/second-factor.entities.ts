import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';

/** A staff account's TOTP secret (docs/dashboard.md, Second factors): sealed under KEYRING_SECRET, never stored in clear. */
@Entity('staff_totp_secrets')
export class StaffTotpSecret {
  @PrimaryColumn({ name: 'user_id', type: 'integer', primaryKeyConstraintName: 'staff_totp_secrets_pkey' })
  userId: number;

  @Column({ name: 'secret_envelope', type: 'varchar', length: 200 })
  secretEnvelope: string;

  /** Null until the first code is confirmed: an unconfirmed secret is no second factor yet. */
  @TimestampColumn('confirmed_at', { nullable: true })
  confirmedAt: Date | null;

  /** The last 30-second step accepted, so a code is never accepted twice. */
  @Column({ name: 'last_used_step', type: 'bigint', nullable: true })
  lastUsedStep: string | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}

/** One single-use recovery code, as the SHA-256 of the code (docs/dashboard.md, Second factors). */
@Entity('staff_recovery_codes')
@Index('staff_recovery_codes_user_code_key', ['userId', 'codeHash'], { unique: true })
export class StaffRecoveryCode {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'staff_recovery_codes_pkey' })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @Column({ name: 'code_hash', type: 'varchar', length: 64 })
  codeHash: string;

  @TimestampColumn('used_at', { nullable: true })
  usedAt: Date | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}

/** A WebAuthn credential of a staff account (docs/dashboard.md, Passkeys). */
@Entity('staff_passkeys')
@Index('staff_passkeys_credential_key', ['credentialId'], { unique: true })
@Index('staff_passkeys_user_idx', ['userId'])
export class StaffPasskey {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'staff_passkeys_pkey' })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  /** base64url, as WebAuthn names it. */
  @Column({ name: 'credential_id', type: 'varchar', length: 1400 })
  credentialId: string;

  /** COSE public key. */
  @Column({ name: 'public_key', type: 'bytea' })
  publicKey: Buffer;

  @Column({ type: 'bigint', default: 0 })
  counter: string;

  /** Comma-separated authenticator transports (usb, internal, hybrid, ...). */
  @Column({ type: 'varchar', length: 200, default: '' })
  transports: string;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;

  @TimestampColumn('last_used_at', { nullable: true })
  lastUsedAt: Date | null;
}

/** Failed sign-ins per account in a fixed window (docs/dashboard.md, Failed sign-ins), shared by every instance. */
@Entity('staff_sign_in_failures')
export class StaffSignInFailures {
  /** SHA-256 of the lower-cased username typed, known or not. */
  @PrimaryColumn({ name: 'account_hash', type: 'varchar', length: 64, primaryKeyConstraintName: 'staff_sign_in_failures_pkey' })
  accountHash: string;

  @TimestampColumn('window_started_at', { default: () => 'now()' })
  windowStartedAt: Date;

  @Column({ type: 'integer', default: 0 })
  failures: number;
}
