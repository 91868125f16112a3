import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';
import { ParentRow } from '../../common/parent-row';
import { License } from '../license.entity';

export type PoolEndReason = 'ended' | 'replaced';

/**
 * A relay pool (docs/relay.md): `seats` of a licence lent to one relay (its key and machine) until `expires_at`. It
 * holds its seats while not ended and not expired; one open pool per licence and relay key. Written and read by SQL only.
 */
@Entity('relay_pools')
@Index('relay_pools_license_idx', ['licenseId', 'issuedAt'])
@Index('relay_pools_open_key', ['licenseId', 'relayKeyId'], { unique: true, where: 'ended_at IS NULL' })
@Check('relay_pools_seats_check', 'seats >= 1')
@Check('relay_pools_end_reason_check', `end_reason IN ('ended', 'replaced')`)
export class RelayPool {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'relay_pools_pkey' })
  id: string;

  @Column({ name: 'license_id', type: 'int' })
  licenseId: number;

  @ParentRow(() => License, 'license_id', 'relay_pools_license_fkey')
  license?: License;

  @Column({ type: 'int' })
  seats: number;

  @Column({ name: 'relay_key_id', type: 'varchar', length: 16 })
  relayKeyId: string;

  @Column({ name: 'relay_public_key', type: 'varchar', length: 1024 })
  relayPublicKey: string;

  @Column({ name: 'relay_fingerprint', type: 'varchar', length: 71 })
  relayFingerprint: string;

  @TimestampColumn('issued_at')
  issuedAt: Date;

  @TimestampColumn('expires_at')
  expiresAt: Date;

  @TimestampColumn('ended_at', { nullable: true })
  endedAt: Date | null;

  @Column({ name: 'end_reason', type: 'varchar', length: 16, nullable: true })
  endReason: PoolEndReason | null;
}
