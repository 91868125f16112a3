import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { TimestampColumn } from '../../common/timestamp-column';
import { ParentRow } from '../../common/parent-row';
import { License } from '../license.entity';

/**
 * A self-service trial (docs/licences.md, Trials): its primary key keeps one trial per product and machine, ever (a
 * trial's licence may expire or be revoked; its row stays). Written and read by TrialsRepository's SQL only.
 */
@Entity('trials')
@Index('trials_email_idx', ['productId', 'customerEmail', 'createdAt'], { where: 'customer_email IS NOT NULL' })
@Index('trials_created_idx', ['createdAt'])
@Index('trials_ip_idx', ['ip', 'createdAt'], { where: 'ip IS NOT NULL' })
export class Trial {
  @PrimaryColumn({ name: 'product_id', type: 'int', primaryKeyConstraintName: 'trials_pkey' })
  productId: number;

  @PrimaryColumn({ name: 'machine_fingerprint', type: 'varchar', length: 71, primaryKeyConstraintName: 'trials_pkey' })
  machineFingerprint: string;

  @Column({ name: 'license_id', type: 'int' })
  licenseId: number;

  @ParentRow(() => License, 'license_id', 'trials_license_fkey')
  license?: License;

  /** Lower-cased, so a later licence for the same address finds it. */
  @Column({ name: 'customer_email', type: 'varchar', length: 254, nullable: true })
  customerEmail: string | null;

  @Column({ type: 'varchar', length: 45, nullable: true })
  ip: string | null;

  @TimestampColumn('created_at', { default: () => 'now()' })
  createdAt: Date;
}
