import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { License } from '../license.entity';

/**
 * The version of a licence's seats (docs/licences.md, Concurrency): moved by every seat bound and by every locked seat
 * change, so an activation that read the seats without a lock binds only if no one changed them since. A row per
 * licence, made by the first change; a licence without a row is at version 0. Written and read by SQL only.
 */
@Entity('license_seat_versions')
export class LicenseSeatVersion {
  @PrimaryColumn({ name: 'license_id', type: 'int', primaryKeyConstraintName: 'license_seat_versions_pkey' })
  licenseId: number;

  @OneToOne(() => License, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'license_id', referencedColumnName: 'id', foreignKeyConstraintName: 'license_seat_versions_license_fkey' })
  license?: License;

  @Column({ type: 'bigint' })
  version: string;
}
