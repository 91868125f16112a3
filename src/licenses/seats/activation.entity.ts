import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';
import { License } from '../license.entity';

export const RELEASE_REASONS = ['deactivated', 'force_released', 'heartbeat_timeout'] as const;
export type ReleaseReason = (typeof RELEASE_REASONS)[number];

/** The unique index that keeps one current seat per machine and licence, whatever the races (SeatsService relies on it). */
export const CURRENT_SEAT_INDEX = 'activations_current_seat_key';

/**
 * One seat: a licence bound to a machine from activated_at until released_at. Constraint names are the ones the
 * migrations create (test/schema.e2e-spec.ts keeps the two equal); DESC and INCLUDE live in the migrations only.
 */
@Entity('activations')
@Index(CURRENT_SEAT_INDEX, ['licenseId', 'machineFingerprint'], { unique: true, where: 'released_at IS NULL' })
@Index('activations_license_idx', ['licenseId', 'activatedAt', 'id']) // (license_id, activated_at DESC, id DESC)
@Index('activations_activated_product_idx', ['activatedAt', 'productId']) // (activated_at) INCLUDE (product_id)
@Index('activations_deactivated_idx', ['licenseId', 'releasedAt'], { where: `release_reason = 'deactivated'` })
// (released_at) INCLUDE (product_id) WHERE release_reason = 'heartbeat_timeout'
@Index('activations_heartbeat_released_idx', ['releasedAt', 'productId'], { where: `release_reason = 'heartbeat_timeout'` })
@Check('activations_release_reason_check', `release_reason IN ('deactivated', 'force_released', 'heartbeat_timeout')`)
@Check('activations_check', `(released_at IS NULL) = (release_reason IS NULL)`)
export class Activation {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'activations_pkey' })
  id: string;

  @Column({ name: 'license_id', type: 'int' })
  licenseId: number;

  /** Always its licence's product (the foreign key on both columns, ON UPDATE CASCADE): the statistics read it from the seat. */
  @Column({ name: 'product_id', type: 'int' })
  productId: number;

  @ManyToOne(() => License, { onDelete: 'CASCADE', onUpdate: 'CASCADE' })
  @JoinColumn([
    { name: 'license_id', referencedColumnName: 'id', foreignKeyConstraintName: 'activations_license_product_fkey' },
    { name: 'product_id', referencedColumnName: 'productId' },
  ])
  license?: License;

  // varchar_pattern_ops (staff search by fingerprint prefix): TypeORM cannot express the operator class.
  @Index('activations_fingerprint_prefix_idx', { synchronize: false })
  @Column({ name: 'machine_fingerprint', type: 'varchar', length: 71 })
  machineFingerprint: string;

  // A trigram GIN index on lower(hostname), only where pg_trgm exists (staff search).
  @Index('activations_hostname_trgm_idx', { synchronize: false })
  @Column({ type: 'varchar', length: 255, nullable: true })
  hostname: string | null;

  @Column({ type: 'varchar', length: 100, nullable: true })
  os: string | null;

  @Column({ name: 'app_version', type: 'varchar', length: 50, nullable: true })
  appVersion: string | null;

  @Column({ type: 'varchar', length: 45, nullable: true })
  ip: string | null;

  @TimestampColumn('activated_at', { default: () => 'now()' })
  activatedAt: Date;

  @TimestampColumn('last_seen_at', { default: () => 'now()' })
  lastSeenAt: Date;

  @TimestampColumn('released_at', { nullable: true })
  releasedAt: Date | null;

  @Column({ name: 'release_reason', type: 'varchar', length: 20, nullable: true })
  releaseReason: ReleaseReason | null;
}
